package web_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"settle/web"
)

// A documented path asked with a method its document does not list is
// 405 method_not_allowed, a JSON error as the document's Error schema
// describes it, with an Allow header naming exactly the documented
// methods; with or without a token (the path and its methods are public,
// in the document). An undocumented path is 404 not_found. Echo answers
// 404 to both when the API's middleware is a group's.
func TestAPI_WrongMethodIs405(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(web.New(web.Config{Targets: testTargets}))
	t.Cleanup(srv.Close)
	doc := loadAPIDoc(t, srv.URL)
	errSchema := doc.doc.Components.Schemas["Error"].Value
	id := uuid.NewString()
	for path, item := range doc.doc.Paths.Map() {
		var documented []string
		for m := range item.Operations() {
			documented = append(documented, m)
		}
		for _, method := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
			if slices.Contains(documented, method) {
				continue
			}
			for _, auth := range []string{"", "Bearer stl_" + strings.Repeat("A", 43)} {
				req, _ := http.NewRequest(method, srv.URL+"/api/v1"+strings.Replace(path, "{id}", id, 1), nil)
				if auth != "" {
					req.Header.Set("Authorization", auth)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				allow := strings.Split(strings.ReplaceAll(resp.Header.Get("Allow"), " ", ""), ",")
				allow = slices.DeleteFunc(allow, func(m string) bool { return m == "OPTIONS" })
				slices.Sort(allow)
				slices.Sort(documented)
				var v any
				if resp.StatusCode != http.StatusMethodNotAllowed || !slices.Equal(allow, documented) ||
					json.Unmarshal(body, &v) != nil || errSchema.VisitJSON(v) != nil || !strings.Contains(string(body), `"method_not_allowed"`) {
					t.Errorf("%s %s (auth %v): %d, Allow %q, %s; want 405 method_not_allowed, Allow %v",
						method, path, auth != "", resp.StatusCode, resp.Header.Get("Allow"), body, documented)
				}
			}
		}
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/v1/tokens", nil)
	req.Header.Set("Authorization", "Bearer stl_"+strings.Repeat("A", 43))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), `"not_found"`) {
		t.Fatalf("an undocumented path: %d %s", resp.StatusCode, body)
	}
}
