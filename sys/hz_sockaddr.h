/* Numeric host + port -> socket address, shared by httpz_stubs.c (listen)
   and extra_stubs.c (reserve a port). Only numeric IPv4/IPv6 literals:
   no name resolution on a server's start path. */
#ifndef HZ_SOCKADDR_H
#define HZ_SOCKADDR_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

/* Fills [ss]/[slen]; returns the address family, or -EINVAL for a port
   outside 0-65535 or a host that is not a numeric address. */
static int hz_sockaddr(const char *host, int port, struct sockaddr_storage *ss, socklen_t *slen) {
  struct sockaddr_in *sin = (struct sockaddr_in *)ss;
  struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
  memset(ss, 0, sizeof *ss);
  if (port < 0 || port > 65535) return -EINVAL;
  if (inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
    sin->sin_family = AF_INET;
    sin->sin_port = htons((uint16_t)port);
    *slen = sizeof *sin;
    return AF_INET;
  }
  if (inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
    sin6->sin6_family = AF_INET6;
    sin6->sin6_port = htons((uint16_t)port);
    *slen = sizeof *sin6;
    return AF_INET6;
  }
  return -EINVAL;
}

#endif
