/* net.c - describe a host (unused by the counter; here for its headers). */
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "store.h"

int net_describe(const char *host, char *out, size_t len)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res;
	char addr[INET6_ADDRSTRLEN] = "?";
	int rc = getaddrinfo(host, NULL, &hints, &res);

	if (rc)
		return snprintf(out, len, "%s: %s", host, gai_strerror(rc));
	if (res->ai_family == AF_INET)
		inet_ntop(AF_INET, &((struct sockaddr_in *)res->ai_addr)->sin_addr, addr, sizeof(addr));
	else if (res->ai_family == AF_INET6)
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)res->ai_addr)->sin6_addr, addr, sizeof(addr));
	freeaddrinfo(res);
	return snprintf(out, len, "%s is %s", host, addr);
}
