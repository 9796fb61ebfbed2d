package cmt_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"

	"github.com/trawl/trawl/internal/cmt"
)

// Decoding the frame of example 4.3 of the spec.
func ExampleDecodeFrame() {
	frame, _ := hex.DecodeString("0000004628020000007B7302000000646E73070000006578616D706C657302000000636D690C00000073020000007374730F0000007777772E636F6E746F736F2E636F6D306901000000")
	body, err := cmt.NewFrameReader(bytes.NewReader(frame), 0).ReadFrame()
	if err != nil {
		fmt.Println(err)
		return
	}
	f, err := cmt.DecodeFrame(body)
	if err != nil {
		fmt.Println(err)
		return
	}
	req := f.Message.(*cmt.UMDNSRequest)
	fmt.Println(f.Message.Code(), f.Priority, req.Collection, req.Site)
	// Output: CMD_UM_DNS_REQUEST high example www.contoso.com
}

// Two roles in one process talk over an in-memory pipe, through the same
// framing and queues as over TCP.
func ExamplePipe() {
	ns, mns := cmt.Pipe(cmt.ConnConfig{Name: "mns"}, cmt.ConnConfig{Name: "ns"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go ns.Run(ctx)
	go mns.Run(ctx)

	ns.Send(ctx, &cmt.UMInit{NodeID: "node1", AdminHost: "localhost", AdminPort: 13000}, cmt.PriorityHigh)
	f := <-mns.Incoming()
	fmt.Printf("%v %+v\n", f.Message.Code(), *f.Message.(*cmt.UMInit))
	// Output: CMD_UM_INIT {NodeID:node1 AdminHost:localhost AdminPort:13000}
}
