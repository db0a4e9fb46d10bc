// Command empty does nothing: the start-up and exit of a Go process on this machine, the floor
// under every geas process (bench/floors.sh).
package main

func main() {}
