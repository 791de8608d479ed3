package browsertest

import (
	"context"
	"os"
	"path/filepath"
	"sync"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// Download is a file the browser downloaded.
type Download struct {
	URL string // what the browser fetched
	// Name is the file name the browser chose: the response's
	// Content-Disposition filename, else one from the URL.
	Name string
	Path string // where the browser saved it, in a directory of the test's
	Body []byte // the file's bytes
}

// Download clicks the link selector (CSS) matches, as a person saving a
// file does, and returns the file once the browser reports it complete.
// Downloads are allowed into a fresh directory of the test's, with the
// browser's download events on; the wait is for those events, never a
// poll of the directory. It fails the test when the click loads a page
// instead, when the browser cancels the download, or when it does not
// finish within the browser's Timeout.
func (b *Browser) Download(selector string) Download {
	b.t.Helper()
	dir := b.t.TempDir()
	ctx, cancel := context.WithTimeout(b.ctx, b.Timeout)
	defer cancel()

	// Listen hands over the events in the order the browser sent them (a
	// page loaded before any download began means the click navigated),
	// on the tab's reading goroutine, which must not block: they queue
	// here and the loop below takes them.
	var (
		mu    sync.Mutex
		queue []any
	)
	wake := make(chan struct{}, 1)
	err := chromedp.Listen(ctx, func(ev any) {
		switch ev.(type) {
		case *cdpbrowser.EventDownloadWillBegin, *cdpbrowser.EventDownloadProgress, *page.EventFrameNavigated:
			mu.Lock()
			queue = append(queue, ev)
			mu.Unlock()
			select {
			case wake <- struct{}{}:
			default:
			}
		}
	})
	if err != nil {
		b.t.Fatalf("browsertest: download with %s: %v", selector, err)
	}
	allow := func(ctx context.Context, _ *chromedp.Target) error {
		// For this tab's browser context only: other tests' tabs share
		// the browser.
		_, err := chromedp.Call(ctx, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{
			Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllow, DownloadPath: dir, EventsEnabled: new(true),
			BrowserContextID: chromedp.FromContext(ctx).BrowserContextID})
		return err
	}
	if err := chromedp.Do(ctx, chromedp.Func(allow), chromedp.Click(chromedp.CSS(selector))); err != nil {
		b.t.Fatalf("browsertest: download with %s: %v", selector, err)
	}

	var d Download
	guid := ""
	for {
		select {
		case <-ctx.Done():
			b.t.Fatalf("browsertest: download with %s: no complete download within %s", selector, b.Timeout)
		case <-wake:
		}
		mu.Lock()
		evs := queue
		queue = nil
		mu.Unlock()
		for _, ev := range evs {
			switch ev := ev.(type) {
			case *page.EventFrameNavigated:
				if guid == "" && ev.Frame.ParentID == "" {
					b.t.Fatalf("browsertest: download with %s: the click loaded %s instead", selector, ev.Frame.URL)
				}
			case *cdpbrowser.EventDownloadWillBegin:
				if guid == "" {
					guid, d.URL, d.Name = ev.GUID, ev.URL, ev.SuggestedFilename
				}
			case *cdpbrowser.EventDownloadProgress:
				if ev.GUID != guid {
					continue
				}
				switch ev.State {
				case cdpbrowser.DownloadProgressStateCanceled:
					b.t.Fatalf("browsertest: download of %s canceled", d.URL)
				case cdpbrowser.DownloadProgressStateCompleted:
					d.Path = ev.FilePath
					if d.Path == "" { // the protocol does not promise it
						d.Path = filepath.Join(dir, d.Name)
					}
					if d.Body, err = os.ReadFile(d.Path); err != nil {
						b.t.Fatalf("browsertest: download of %s: %v", d.URL, err)
					}
					return d
				}
			}
		}
	}
}
