/* prism-test-mux: attaches mux_encap.bpf.o (tc egress) on the router's link to
 * the front-end host and configures it, with an XDP_PASS program on the same link
 * (mux_encap.bpf.c says why); detaches both on SIGTERM.  With PIN_PATH (a bpffs
 * path) and CLIENT_IFACE it pins the mux's pin map (mux_pins) there and attaches
 * mux_pin on the ingress of the router's link from the client (fabric steering),
 * which encapsulates from PIN_SRC.
 *   prism-test-mux OBJ IFACE VIP ROUTER_ADDR FRONTEND_DIP [PIN_PATH CLIENT_IFACE PIN_SRC] */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void) sig;
    stop = 1;
}

int main(int argc, char **argv)
{
    struct { __u32 vip, outer_src, dip, pin_src; } cfg = { 0 };
    if ((argc != 6 && argc != 9) || inet_pton(AF_INET, argv[3], &cfg.vip) != 1
        || inet_pton(AF_INET, argv[4], &cfg.outer_src) != 1
        || inet_pton(AF_INET, argv[5], &cfg.dip) != 1
        || (argc == 9 && inet_pton(AF_INET, argv[8], &cfg.pin_src) != 1)) {
        fprintf(stderr, "usage: prism-test-mux OBJ IFACE VIP ROUTER_ADDR FRONTEND_DIP [PIN_PATH CLIENT_IFACE PIN_SRC]\n");
        return 2;
    }
    int ifindex = (int) if_nametoindex(argv[2]);
    struct bpf_object *obj = bpf_object__open_file(argv[1], NULL);
    if (!ifindex || !obj || bpf_object__load(obj)) {
        fprintf(stderr, "cannot load %s on %s\n", argv[1], argv[2]);
        return 1;
    }
    __u32 zero = 0;
    bpf_map_update_elem(bpf_object__find_map_fd_by_name(obj, "mux_cfg"), &zero, &cfg, BPF_ANY);
    int pin_ifindex = argc == 9 ? (int) if_nametoindex(argv[7]) : 0;
    DECLARE_LIBBPF_OPTS(bpf_tc_hook, pin_hook, .ifindex = pin_ifindex, .attach_point = BPF_TC_INGRESS);
    DECLARE_LIBBPF_OPTS(bpf_tc_opts, pin_opts, .handle = 1, .priority = 1,
                        .prog_fd = bpf_program__fd(bpf_object__find_program_by_name(obj, "mux_pin")));
    if (argc == 9) {
        if (!pin_ifindex || bpf_map__pin(bpf_object__find_map_by_name(obj, "mux_pins"), argv[6])) {
            fprintf(stderr, "cannot pin mux_pins at %s for %s\n", argv[6], argv[7]);
            return 1;
        }
        bpf_tc_hook_create(&pin_hook);   /* EEXIST is fine */
        if (bpf_tc_attach(&pin_hook, &pin_opts)) {
            fprintf(stderr, "cannot attach tc ingress on %s\n", argv[7]);
            unlink(argv[6]);
            return 1;
        }
    }
    DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex, .attach_point = BPF_TC_EGRESS);
    DECLARE_LIBBPF_OPTS(bpf_tc_opts, opts, .handle = 1, .priority = 1,
                        .prog_fd = bpf_program__fd(bpf_object__find_program_by_name(obj, "mux_encap")));
    bpf_tc_hook_create(&hook);   /* EEXIST is fine */
    if (bpf_tc_attach(&hook, &opts)) {
        fprintf(stderr, "cannot attach tc egress on %s\n", argv[2]);
        return 1;
    }
    int pass_fd = bpf_program__fd(bpf_object__find_program_by_name(obj, "router_xdp_pass"));
    if (bpf_xdp_attach(ifindex, pass_fd, XDP_FLAGS_DRV_MODE, NULL)) {
        fprintf(stderr, "cannot attach XDP on %s\n", argv[2]);
        bpf_tc_detach(&hook, &opts);
        return 1;
    }
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    printf("{\"ready\":true}\n");
    fflush(stdout);
    while (!stop) {
        pause();
    }
    bpf_xdp_detach(ifindex, XDP_FLAGS_DRV_MODE, NULL);
    opts.prog_fd = opts.prog_id = opts.flags = 0;
    bpf_tc_detach(&hook, &opts);
    if (argc == 9) {
        pin_opts.prog_fd = pin_opts.prog_id = pin_opts.flags = 0;
        bpf_tc_detach(&pin_hook, &pin_opts);
        unlink(argv[6]);
    }
    bpf_object__close(obj);
    return 0;
}
