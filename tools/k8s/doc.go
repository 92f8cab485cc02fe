// Package k8s is the validation of deploy/k8s, in a module of its own so
// that kustomize's and kubeconform's dependencies stay out of c2cluster's
// go.mod. It has only tests (k8s_test.go); README.md says what they check.
package k8s
