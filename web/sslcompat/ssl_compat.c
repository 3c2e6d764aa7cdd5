/*
 * ssl_compat.c - a shim that lets Debian's civetweb 1.15 use OpenSSL 3.
 *
 * Debian builds libcivetweb with OpenSSL loaded at run time: it dlopen()s "libssl.so" and
 * looks up, among others, SSL_get_peer_certificate, which OpenSSL 3 no longer exports
 * (it became a macro for SSL_get1_peer_certificate). The lookup fails and civetweb
 * cannot start HTTPS at all ("load_tls_dll: libssl.so: cannot find
 * SSL_get_peer_certificate").
 *
 * This library's SONAME is "libssl.so" and it depends on libssl.so.3. web/tls.c dlopen()s
 * it before civetweb loads OpenSSL; glibc then answers civetweb's dlopen("libssl.so") with
 * this already loaded object (a match on SONAME), and dlsym() on it finds every other
 * SSL_* symbol in its dependency, the real libssl.so.3. Nothing else is defined here.
 */
#include <openssl/ssl.h>

X509 *muster_ssl_get_peer_certificate(const SSL *s) __asm__("SSL_get_peer_certificate");

/* OpenSSL 1.1's SSL_get_peer_certificate returned a new reference, as get1 does. */
X509 *muster_ssl_get_peer_certificate(const SSL *s)
{
    return SSL_get1_peer_certificate(s);
}
