// Package webpage renders locus's reports as self-contained HTML pages
// (html/template, one embedded stylesheet and script, images inline): the
// backlog report and the evaluation report.
package webpage

import (
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
)

//go:embed assets
var assets embed.FS

// page is what the layout renders around a page's content.
type page struct {
	Title, Subtitle string
	CSS             template.CSS
	JS              template.JS
	// ScriptHash allows the page's own script and no other (the
	// Content-Security-Policy's script-src).
	ScriptHash string
	Data       any
}

var (
	css, js    string
	scriptHash string
	templates  = map[string]*template.Template{}
)

func init() {
	c, err := assets.ReadFile("assets/style.css")
	if err != nil {
		panic(err)
	}
	j, err := assets.ReadFile("assets/page.js")
	if err != nil {
		panic(err)
	}
	css, js = string(c), string(j)
	sum := sha256.Sum256(j)
	scriptHash = "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
	for _, name := range []string{"backlog", "eval"} {
		templates[name] = template.Must(template.New(name).Funcs(funcs).ParseFS(assets, "assets/layout.html", "assets/"+name+".html"))
	}
}

var funcs = template.FuncMap{
	"f3": func(v float64) string { return fmt.Sprintf("%.3f", v) },
}

// render writes the page name with the given title and data.
func render(w io.Writer, name, title, subtitle string, data any) error {
	p := page{Title: title, Subtitle: subtitle, CSS: template.CSS(css), JS: template.JS(js), ScriptHash: scriptHash, Data: data}
	if err := templates[name].ExecuteTemplate(w, "layout", p); err != nil {
		return fmt.Errorf("%s page: %w", name, err)
	}
	return nil
}
