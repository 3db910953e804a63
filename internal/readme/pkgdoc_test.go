package readme

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestPackageDocs: every package of the repository, in every module
// (nested ones and those outside go.work too), has a package comment, so
// that `go doc` and pkg.go.dev say what it is for.
func TestPackageDocs(t *testing.T) {
	root := filepath.Join("..", "..")
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules") {
			return filepath.SkipDir
		}
		files, err := filepath.Glob(filepath.Join(path, "*.go"))
		if err != nil {
			return err
		}
		var sources []string
		documented := false
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			sources = append(sources, f)
			file, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.PackageClauseOnly|parser.ParseComments)
			if err != nil {
				return err
			}
			if file.Doc != nil && strings.TrimSpace(file.Doc.Text()) != "" {
				documented = true
			}
		}
		if len(sources) == 0 {
			return nil
		}
		checked++
		if !documented {
			rel, _ := filepath.Rel(root, path)
			t.Errorf("package %s has no package comment", filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 40 {
		t.Fatalf("%d packages checked: the walk missed the repository", checked)
	}
	t.Logf("%d packages checked", checked)
}
