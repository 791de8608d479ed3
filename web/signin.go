package web

import (
	"github.com/labstack/echo/v4"

	"settle/auth"
	"settle/views"
)

// RenderSignIn renders the pages of package auth's sign-in — the demo
// chooser, the link to the organisation's provider, "signed out" and "no
// role" — with the console's templates. cmd/settle hands it to
// auth.WithRender.
func RenderSignIn(c echo.Context, status int, v auth.SignInView) error {
	var s server // render uses none of the server's fields
	if v.NoRole {
		return s.render(c, status, views.NoRole(views.Layout{Title: "No role"}))
	}
	page := views.SignInPage{Demo: v.Demo, Return: v.Return, Error: v.Error, CSRF: v.CSRF, StartURL: v.LoginURL}
	if v.SignedOut {
		page.Notice = "You have signed out."
	}
	for _, u := range v.Users {
		page.Users = append(page.Users, views.DemoUser{ID: u.ID, Name: u.Name, Description: u.Description})
	}
	return s.render(c, status, views.SignIn(page))
}
