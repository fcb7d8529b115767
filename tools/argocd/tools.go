//go:build tools

// Package tools pins the ArgoCD command install-tools builds (one multicall binary).
package tools

import _ "github.com/argoproj/argo-cd/v3/cmd"
