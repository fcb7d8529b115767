//go:build tools

// Package tools pins the slurm-operator commands install-tools builds.
package tools

import (
	_ "github.com/SlinkyProject/slurm-operator/cmd/manager"
	_ "github.com/SlinkyProject/slurm-operator/cmd/webhook"
)
