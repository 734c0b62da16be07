/*
 * tunnel.h - a TLS tunnel lockbench starts in front of a server of the user's
 * given as rediss:// (Debian 12's hiredis 0.14 has no TLS, so the C recipes
 * cannot speak it themselves), or an etcd member given as https:// (lockbench's
 * own requests to its JSON gateway, ensemble.c): stunnel (Debian's stunnel4) in client mode,
 * listening on a free loopback port, verifying the server's certificate
 * against --tls-ca (the system's CAs without it; nothing with --tls-insecure)
 * and its name or address, presenting --tls-cert and --tls-key when given.
 * It is an lb_server (rserver.h): its own directory, PR_SET_PDEATHSIG, the
 * janitor after a kill -9, stopped with the run.
 */
#ifndef LB_TUNNEL_H
#define LB_TUNNEL_H

#include <stdbool.h>
#include <stddef.h>

#include "rserver.h"

struct lb_tls {
	const char *ca, *cert, *key; /* files, or NULL; borrowed */
	bool insecure;               /* no verification of the server (--tls-insecure) */
};

/* A tunnel from 127.0.0.1:(its ->port) to @host:@port, and a reply to a
 * request through it (@scheme "rediss": a PING; "https", an etcd member: GET
 * /version), so a refused handshake is said now, with its cause: the
 * certificate, the name, the server not speaking TLS. NULL with a message
 * naming @scheme://@host:@port. */
struct lb_server *lb_tunnel_start(const char *scheme, const char *host, int port,
				  const struct lb_tls *tls);

#endif
