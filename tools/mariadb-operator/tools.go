//go:build tools

// Package tools pins the mariadb-operator command install-tools builds.
package tools

import _ "github.com/mariadb-operator/mariadb-operator/v26/cmd/controller"
