// Package static holds the console's CSS and its little JavaScript,
// embedded in the binary. Each file is served under a name carrying a hash
// of its content, so that browsers may keep it for a year and still fetch a
// new version the moment it changes. Nothing is loaded from elsewhere.
package static

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"path"
	"strings"
)

//go:embed files
var files embed.FS

// Asset is one embedded file.
type Asset struct {
	Name        string // "style.css"
	ContentType string
	Body        []byte
}

// URL is the path a page links the embedded file name by:
// /static/<base>.<hash>.<ext>. It panics for a name that is not embedded,
// which every component test would catch. The hash is recomputed on each
// call rather than cached: the files are a few kilobytes, and no package
// state is kept.
func URL(name string) string {
	b, err := files.ReadFile("files/" + name)
	if err != nil {
		panic("static: no embedded file " + name)
	}
	return "/static/" + hashedName(name, b)
}

// Lookup returns the asset served under hashed, a name URL produced; a
// name with a stale or wrong hash is not found.
func Lookup(hashed string) (Asset, bool) {
	ext := path.Ext(hashed)
	stem := strings.TrimSuffix(hashed, ext)
	dot := strings.LastIndexByte(stem, '.')
	if dot < 0 || strings.ContainsAny(hashed, "/\\") {
		return Asset{}, false
	}
	name := stem[:dot] + ext
	b, err := files.ReadFile("files/" + name)
	if err != nil || hashedName(name, b) != hashed {
		return Asset{}, false
	}
	return Asset{Name: name, ContentType: contentType(ext), Body: b}, true
}

func hashedName(name string, body []byte) string {
	sum := sha256.Sum256(body)
	ext := path.Ext(name)
	return strings.TrimSuffix(name, ext) + "." + hex.EncodeToString(sum[:6]) + ext
}

func contentType(ext string) string {
	switch ext {
	case ".css":
		return "text/css; charset=utf-8"
	case ".js":
		return "text/javascript; charset=utf-8"
	}
	return "application/octet-stream"
}
