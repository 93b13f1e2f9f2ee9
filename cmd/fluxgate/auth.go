package main

// fluxgate auth: helpers for the users file of `fluxgate serve --users`
// (package auth describes the file).

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/fluxgate-io/fluxgate/auth"
	"github.com/fluxgate-io/fluxgate/internal/cli"
	"github.com/peterbourgon/ff/v4"
)

func authCommand(std stdio) *ff.Command {
	secret := func(name, shortHelp string, run func(stdio) error) *ff.Command {
		return &ff.Command{Name: name, Usage: "fluxgate auth " + name, ShortHelp: shortHelp, Flags: cli.NewFlagSet(name),
			Exec: func(_ context.Context, args []string) error {
				if len(args) > 0 {
					return cli.UsageError(fmt.Errorf("unexpected argument %q", args[0]))
				}
				return run(std)
			}}
	}
	group := cli.Group("auth", "fluxgate auth <command>", "hash a password or API token, or make a token or token secret, for serve --users",
		secret("hash-password", `read a password from stdin (one line), print its bcrypt hash for "password_bcrypt"`, hashPassword),
		secret("hash-token", `read an API token from stdin (one line), print its SHA-256 for "token_sha256"`, hashToken),
		secret("new-token", "print a random API token and, on stderr, its SHA-256", newToken),
		secret("new-secret", `print a random "token_secret" (base64, 32 bytes)`, newSecret))
	group.LongHelp = `e.g. printf '%s' "$PASSWORD" | fluxgate auth hash-password`
	return group
}

func hashPassword(std stdio) error {
	pw, err := readSecretLine(std.in)
	if err != nil {
		return err
	}
	if len(pw) > 72 {
		return errors.New("bcrypt uses at most 72 bytes of a password; this one is longer")
	}
	h, err := auth.HashPassword(pw)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(std.out, h)
	return err
}

func hashToken(std stdio) error {
	tok, err := readSecretLine(std.in)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(std.out, auth.HashToken(tok))
	return err
}

func newToken(std stdio) error {
	// 32 random bytes, base64url: the same shape as a secret.
	tok := strings.NewReplacer("+", "-", "/", "_", "=", "").Replace(auth.NewSecret())
	fmt.Fprintln(std.out, tok)
	_, err := fmt.Fprintf(std.err, "token_sha256: %s\n", auth.HashToken(tok))
	return err
}

func newSecret(std stdio) error {
	_, err := fmt.Fprintln(std.out, auth.NewSecret())
	return err
}

// readSecretLine reads the first line of r, without its line ending.
func readSecretLine(r io.Reader) (string, error) {
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("empty input: give the secret on stdin")
	}
	return line, nil
}
