// Command jsonschema does nothing but link github.com/santhosh-tekuri/jsonschema/v5, the schema
// library geas is required to keep: its package init, which compiles five drafts' metaschemas
// before main runs, is a cost every geas process pays (bench/floors.sh).
package main

import _ "github.com/santhosh-tekuri/jsonschema/v5"

func main() {}
