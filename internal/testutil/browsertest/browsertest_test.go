package browsertest

import (
	"context"
	"image"
	"image/color"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A page whose text exists only after its script ran: the DOM must hold
// it, and its screenshot must not be blank; an empty white page's must.
func TestDOMAndScreenshot(t *testing.T) {
	b := Need(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if r.URL.Path == "/blank" {
			w.Write([]byte(`<!doctype html><html><body style="background:#fff"></body></html>`))
			return
		}
		w.Write([]byte(`<!doctype html><html><body><h1 id="t">static</h1>
<script>setTimeout(function(){document.getElementById("t").textContent="written by script"},100)</script></body></html>`))
	}))
	defer srv.Close()
	ctx := context.Background()
	dom, err := b.DOM(ctx, srv.URL+"/page")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(dom, "written by script") {
		t.Errorf("the DOM lacks the script's text:\n%s", dom)
	}
	img, _, err := b.Screenshot(ctx, srv.URL+"/page", 400, 300, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := NotBlank(img, 0.001); err != nil {
		t.Error(err)
	}
	blank, _, err := b.Screenshot(ctx, srv.URL+"/blank", 400, 300, "")
	if err != nil {
		t.Fatal(err)
	}
	if NotBlank(blank, 0.001) == nil {
		t.Error("a white page passed as not blank")
	}
}

func TestNotBlank(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 10, 10))
	if NotBlank(img, 0.01) == nil {
		t.Error("a one-colour image passed")
	}
	img.Set(3, 3, color.RGBA{R: 255, A: 255})
	if err := NotBlank(img, 0.01); err != nil {
		t.Error(err)
	}
}
