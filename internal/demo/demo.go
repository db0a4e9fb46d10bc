// Package demo owns the project geas demo builds: a shell greeter in a git repository, one commit
// per task, and a .geas mission with five tasks, each built to get one verdict (pass, fail, block,
// error, and a fail for a test rewritten to print ok). The content is embedded from project/ as the files the demo writes:
//
//	project/tasks.json       the tasks in the order of their commits: id, title, expected verdict,
//	                         the story the demo tells about it, its commit message
//	project/commits/base/    the first commit, the greeter before any task
//	project/commits/<id>/    the files task <id>'s commit adds or replaces
//	project/geas/            .geas as the demo writes it; the files under missions/demo/tasks/<id>/
//	                         are templates ({{.Base}} is the commit before the task's, {{.Head}} its own)
//
// Building the project is Start then Add for each task; gating it is the caller's.
package demo

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/template"

	"github.com/geas-dev/geas/internal/git"
)

// Mission is the id of the demo's mission (project/geas/missions/demo).
const Mission = "demo"

//go:embed all:project
var content embed.FS

// Task is one task of the demo mission and what it shows.
type Task struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	// Want is the verdict the task is built to get.
	Want string `json:"expected"`
	// Story is why it gets it, told before the gate's own words.
	Story string `json:"story"`
	// Message is the message of the task's commit.
	Message string `json:"message"`
}

// manifest is project/tasks.json.
type manifest struct {
	BaseMessage string `json:"base_message"`
	Tasks       []Task `json:"tasks"`
}

func readManifest() (manifest, error) {
	var m manifest
	b, err := content.ReadFile("project/tasks.json")
	if err != nil {
		return m, err
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&m); err != nil {
		return m, fmt.Errorf("demo tasks.json: %w", err)
	}
	return m, nil
}

// Tasks are the demo's tasks, in the order of their commits.
func Tasks() ([]Task, error) {
	m, err := readManifest()
	return m.Tasks, err
}

// Project is a demo project being built in a directory.
type Project struct {
	dir  string
	repo *git.Writer
	base string // the last commit: the base of the next task
}

// Start builds the demo project before any task in dir, an existing empty directory: a git
// repository with the greeter's first commit, and the .geas files the whole mission shares
// (run.json and the debt register).
func Start(dir string) (*Project, error) {
	m, err := readManifest()
	if err != nil {
		return nil, err
	}
	repo, err := git.Init(dir)
	if err != nil {
		return nil, err
	}
	files, err := commitFiles("base")
	if err != nil {
		return nil, err
	}
	base, err := repo.Commit(git.FileCommit{Message: m.BaseMessage, Files: files})
	if err != nil {
		return nil, err
	}
	p := &Project{dir: dir, repo: repo, base: base}
	tasks := "project/geas/missions/" + Mission + "/tasks"
	err = fs.WalkDir(content, "project/geas", func(name string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && name == tasks:
			return fs.SkipDir
		case d.IsDir():
			return nil
		}
		b, err := content.ReadFile(name)
		if err != nil {
			return err
		}
		return p.writeGeas(strings.TrimPrefix(name, "project/geas/"), b)
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Add commits t's files on top of the previous commit and writes t's contract, record,
// integration.json and evidence: its base is the commit before its own, its integration head its
// own commit. It returns the commit id; the working tree is then that commit, as a verdict about it
// needs (SPEC §2.7).
func (p *Project) Add(t Task) (string, error) {
	files, err := commitFiles(t.ID)
	if err != nil {
		return "", err
	}
	head, err := p.repo.Commit(git.FileCommit{Message: t.Message, Files: files})
	if err != nil {
		return "", err
	}
	vars := struct{ Base, Head string }{Base: p.base, Head: head}
	td := "missions/" + Mission + "/tasks/" + t.ID
	sub, err := fs.Sub(content, "project/geas/"+td)
	if err != nil {
		return "", err
	}
	err = fs.WalkDir(sub, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		text, err := fs.ReadFile(sub, name)
		if err != nil {
			return err
		}
		tmpl, err := template.New(name).Option("missingkey=error").Parse(string(text))
		if err != nil {
			return err
		}
		var b bytes.Buffer
		if err := tmpl.Execute(&b, vars); err != nil {
			return err
		}
		return p.writeGeas(td+"/"+name, b.Bytes())
	})
	if err != nil {
		return "", fmt.Errorf("task %s: %w", t.ID, err)
	}
	p.base = head
	return head, nil
}

// commitFiles are the files of commit name (base or a task id): slash-separated paths relative to
// the repository root, and their contents.
func commitFiles(name string) (map[string]string, error) {
	sub, err := fs.Sub(content, "project/commits/"+name)
	if err != nil {
		return nil, err
	}
	files := map[string]string{}
	err = fs.WalkDir(sub, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(sub, name)
		files[name] = string(b)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", name, err)
	}
	return files, nil
}

// writeGeas writes b to .geas/name (slash-separated) in the project.
func (p *Project) writeGeas(name string, b []byte) error {
	root, err := os.OpenRoot(p.dir)
	if err != nil {
		return err
	}
	defer root.Close()
	rel := filepath.FromSlash(".geas/" + name)
	if err := root.MkdirAll(filepath.Dir(rel), 0o755); err != nil {
		return err
	}
	return root.WriteFile(rel, b, 0o644)
}
