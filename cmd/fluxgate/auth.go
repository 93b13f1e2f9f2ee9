package main

// fluxgate auth: helpers for the users file of `fluxgate serve --users`
// (package auth describes the file).

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/fluxgate-io/fluxgate/auth"
	"github.com/fluxgate-io/fluxgate/internal/cli"
)

const authUsage = `usage: fluxgate auth <command>

commands:
  hash-password   read a password from stdin (one line), print its bcrypt hash for "password_bcrypt"
  hash-token      read an API token from stdin (one line), print its SHA-256 for "token_sha256"
  new-token       print a random API token and, on stderr, its SHA-256
  new-secret      print a random "token_secret" (base64, 32 bytes)

e.g. printf '%s' "$PASSWORD" | fluxgate auth hash-password`

func runAuth(ctx context.Context, args []string) error {
	return authMain(args, osStdio())
}

func authMain(args []string, std stdio) error {
	if len(args) != 1 {
		io.WriteString(std.err, authUsage+"\n")
		return cli.ErrUsage
	}
	switch args[0] {
	case "hash-password":
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
		fmt.Fprintln(std.out, h)
	case "hash-token":
		tok, err := readSecretLine(std.in)
		if err != nil {
			return err
		}
		fmt.Fprintln(std.out, auth.HashToken(tok))
	case "new-token":
		// 32 random bytes, base64url: the same shape as a secret.
		tok := strings.NewReplacer("+", "-", "/", "_", "=", "").Replace(auth.NewSecret())
		fmt.Fprintln(std.out, tok)
		fmt.Fprintf(std.err, "token_sha256: %s\n", auth.HashToken(tok))
	case "new-secret":
		fmt.Fprintln(std.out, auth.NewSecret())
	case "-h", "--help", "help":
		io.WriteString(std.err, authUsage+"\n")
		return flag.ErrHelp
	default:
		io.WriteString(std.err, authUsage+"\n")
		return fmt.Errorf("unknown command %q", args[0])
	}
	return nil
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
