/* Random loss for the tests (this kernel has no netem): attached on a link's tc
 * egress, drops each packet with probability LOSS_PER_MILLE / 1000.  A packet it
 * keeps goes on to the link's next filter (TC_ACT_UNSPEC): the host agent's cookie
 * encoder is one, on a host that writes Cheetah cookies. */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#ifndef LOSS_PER_MILLE
#define LOSS_PER_MILLE 10
#endif

SEC("tc")
int random_loss(struct __sk_buff *skb)
{
    (void) skb;
    return bpf_get_prandom_u32() % 1000 < LOSS_PER_MILLE ? TC_ACT_SHOT : TC_ACT_UNSPEC;
}
