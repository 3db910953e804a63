package gateway

import "time"

// noticeDrain makes /readyz answer 503 from now on, then serves on as
// before for notice, new requests included. A balancer that checks
// /readyz takes the replica out of its rotation meanwhile, so that no
// request it sends afterwards meets a closed port or a kept-alive
// connection closed under it: stopping loses no call.
func (g *Gateway) noticeDrain(notice time.Duration) {
	g.draining.Store(true)
	if notice <= 0 {
		return
	}
	g.log.Info("gateway: draining: /readyz answers 503, serving on", "for", notice)
	t := time.NewTimer(notice)
	defer t.Stop()
	<-t.C
}
