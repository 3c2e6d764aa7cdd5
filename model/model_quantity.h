/*
 * model_quantity.h - Kubernetes resource quantities ("100m", "4Gi") as exact integers.
 *
 * A quantity is parsed once, at decoding, into an int64: cpu in thousandths, everything
 * else in whole units (struct model_res); nothing in muster does floating-point
 * arithmetic on resources. The functions keep no state.
 */
#ifndef MUSTER_MODEL_QUANTITY_H
#define MUSTER_MODEL_QUANTITY_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct err;

/* Parses a Kubernetes quantity: decimal number with optional sign, fraction and
 * exponent ("1.5", "1e3", "-2"), or with a suffix: binary Ki Mi Gi Ti Pi Ei, decimal
 * n u m "" k M G T P E. With milli != 0 the result is in thousandths (cpu: "100m" ->
 * 100, "1" -> 1000); otherwise whole units, rounded up ("500m" -> 1). Exact (no
 * floating point). Returns 0, or ERR_INVALID for bad syntax, a negative value or a value
 * that does not fit in int64. */
int model_quantity_parse(const char *s, int milli, int64_t *out, struct err *err);
/* 1 when the resource is measured in thousandths ("cpu"). */
int model_resource_is_milli(const char *resource);
/* Formats a value the way kubectl would ("100m", "4", "4Gi", "1500M"). */
void model_quantity_format(int64_t value, int milli, char *buf, size_t n);

/* 1 when resource is an extended resource as Kubernetes defines it: a domain-prefixed name
 * ("nvidia.com/gpu") outside kubernetes.io/, not a quota's "requests." name. */
int model_resource_is_extended(const char *resource);
/* Kubernetes' rule for extended resources in one container's resources object ({requests,
 * limits}): whole numbers only, and a request equal to the limit when both are given.
 * Returns 0 when it holds (or resources is not an object), else 1 with *which ("requests" or
 * "limits"), *res (the resource, borrowed from resources) and msg ("must be an integer",
 * "must be equal to nvidia.com/gpu limit of 2"). Quantities that do not parse are left to
 * the caller's own check. */
int model_extended_check(const json_t *resources, const char **which, const char **res, char *msg,
                         size_t n);

/* The most one node may claim, or one pod ask, of a resource: 2^50 units ("1Pi" of memory,
 * about 10^12 cpus). Validation refuses more (400); decoding (a mirrored Node's status, an
 * older store) takes more as this much. Sums of them over nodes saturate (base/sat.h). */
#define MODEL_QUANTITY_MAX ((int64_t)1 << 50)
#define MODEL_QUANTITY_MAX_TEXT "1Pi"

struct model_res {
    char *name;    /* "cpu", "memory", "pods", "nvidia.com/gpu", ... */
    int64_t value; /* cpu in thousandths, everything else in whole units */
};

#endif
