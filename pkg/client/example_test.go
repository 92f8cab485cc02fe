package client_test

import (
	"context"
	"fmt"
	"os"

	"github.com/c2cluster/c2cluster/pkg/client"
	c2clusterv1 "github.com/c2cluster/c2cluster/proto/c2cluster/v1"
)

// Prove a sector's C1 output on a running coordinator and print progress.
func Example() {
	c := client.New("http://127.0.0.1:8080")
	doc, err := os.ReadFile("sector.c1.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	st, err := c.Prove(context.Background(), &c2clusterv1.SubmitRequest{
		C1Json:         doc,
		Priority:       c2clusterv1.Priority_PRIORITY_HIGH,
		IdempotencyKey: "f01000-sector-42",
	}, func(j *c2clusterv1.JobStatus) { fmt.Println(client.ProgressLine(j)) })
	if err != nil {
		fmt.Println(err) // a *client.JobError (errors.Is client.ErrJobFailed) names the reason
		return
	}
	fmt.Printf("proof: %d bytes\n", len(st.Proof))
}
