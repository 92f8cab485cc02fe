// Package docs holds no code: its tests (docs_test.go) keep the
// documentation in this folder and the README correct — every relative
// link points at a file that exists and every #anchor at a heading, every
// docs/… file a source, script or document names exists, and the
// configuration reference (configuration.md) lists exactly the flags,
// variables and YAML keys the coordinator and the worker accept.
package docs
