package postgres

import (
	"fmt"
	"io/fs"
)

func subFS(fsys fs.FS, dir string) (fs.FS, error) {
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	return sub, nil
}
