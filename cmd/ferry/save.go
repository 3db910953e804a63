package main

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"mime"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/ferrymcp/ferry/protocol"
)

// saveBinary writes base64 data (an image, audio, a resource's blob) in
// --output-dir under a name of its own: the last element of the
// resource's URI path, or KIND-N with the MIME type's extension; never a
// path the server chose (no "..", no folder), never over an existing
// file. It returns the file's path.
func (o *cli) saveBinary(kind, mimeType, uri, b64 string) (string, error) {
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return "", fmt.Errorf("%s content is not base64: %v", kind, err)
	}
	if err := os.MkdirAll(o.outputDir, 0o755); err != nil {
		return "", err
	}
	name := ""
	if u, err := url.Parse(uri); err == nil && uri != "" {
		name = safeFileName(path.Base(u.Path))
	}
	ext := ""
	if exts, _ := mime.ExtensionsByType(mimeType); len(exts) > 0 {
		ext = exts[0]
	}
	if name == "" {
		name = kind + ext
	}
	base, suffix := strings.TrimSuffix(name, filepath.Ext(name)), filepath.Ext(name)
	for i := 1; ; i++ {
		p := filepath.Join(o.outputDir, name)
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) && i < 1000 {
			name = fmt.Sprintf("%s-%d%s", base, i+1, suffix)
			continue
		}
		if err != nil {
			return "", err
		}
		_, err = f.Write(data)
		return p, errors.Join(err, f.Close())
	}
}

// safeFileName keeps letters, digits and . _ - of a name a server gave;
// "", "." and ".." give "".
func safeFileName(s string) string {
	b := []rune(s)
	for i, r := range b {
		if !(r == '.' || r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			b[i] = '_'
		}
	}
	s = strings.TrimLeft(string(b), ".")
	if len(s) > 100 {
		s = s[len(s)-100:]
	}
	return s
}

// saveContents saves the binary content of a result in --output-dir and
// returns each saved block's path, by its index.
func (o *cli) saveContents(c []protocol.Content) (map[int]string, error) {
	saved := map[int]string{}
	for i, b := range c {
		var p string
		var err error
		switch {
		case (b.Type == protocol.ContentImage || b.Type == protocol.ContentAudio) && b.Data != "":
			p, err = o.saveBinary(string(b.Type), b.MIMEType, "", b.Data)
		case b.Type == protocol.ContentResource && b.Resource != nil && b.Resource.IsBlob():
			p, err = o.saveBinary("blob", b.Resource.MIMEType, b.Resource.URI, b.Resource.Blob)
		default:
			continue
		}
		if err != nil {
			return saved, fmt.Errorf("--output-dir: %v", err)
		}
		saved[i] = p
	}
	return saved, nil
}

// withSaved saves the binary blocks of c when --output-dir is given and
// returns c with each saved block shown as its file ("[image image/png
// saved to out/image.png]"); in JSON mode the result stays as the
// server sent it and the files are named on stderr.
func (o *cli) withSaved(c []protocol.Content) ([]protocol.Content, error) {
	if o.outputDir == "" {
		return c, nil
	}
	saved, err := o.saveContents(c)
	out := make([]protocol.Content, len(c))
	copy(out, c)
	for i, p := range saved {
		kind, mt := string(c[i].Type), c[i].MIMEType
		if c[i].Resource != nil {
			kind, mt = "resource "+c[i].Resource.URI, c[i].Resource.MIMEType
		}
		line := fmt.Sprintf("[%s %s saved to %s]", kind, mt, p)
		if o.json {
			o.logf("ferry: %s", line[1:len(line)-1])
		}
		out[i] = protocol.Content{Type: protocol.ContentText, Text: line}
	}
	return out, err
}
