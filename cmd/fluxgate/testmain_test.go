package main

import (
	"testing"

	"github.com/fluxgate-io/fluxgate/internal/memtest"
)

// TestMain checks, after the tests, what they allocated through memtest.Shared.
func TestMain(m *testing.M) { memtest.Main(m) }
