/*
 * manifest_yaml_split.c - a big YAML stream read on two threads (internal.h
 * model__yaml_read_split).
 *
 * libyaml reads a line that starts with "---" and then white space (or ends there) as the
 * start of a document wherever it stands: inside a scalar or a flow collection it is an
 * error ("found unexpected document indicator", "did not find expected ','"), never
 * content. So the bytes before such a line and the bytes from it on are each a stream of
 * whole documents, read alike alone or together: anchors, tags and the version are a
 * document's own, and an empty document is skipped either way. Only two things are the
 * stream's: the documents' numbers (the second part's are numbered on after the first's)
 * and the budget of bytes alias expansion may add (the parts share it: when each keeps
 * within its share, the whole keeps within the sum). Whatever a part cannot read, the
 * whole read decides, so every error names what it names read whole.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "model_manifest.h"

/* The first '-' of a line "---" then white space or the end, at or after from; NULL when
 * there is none. */
static const char *marker_from(const char *from, const char *end)
{
    for (const char *p = from; p < end && (p = memmem(p, (size_t)(end - p), "\n---", 4)); p++) {
        const char *after = p + 4;
        if (after == end || (*after && strchr(" \t\r\n", *after))) /* strchr finds NUL too */
            return p + 1;
    }
    return NULL;
}

static int read_part(const struct model__part *p, struct model_manifest *out, struct err *err)
{
    return model__yaml_read(p->buf, p->len, p->budget, 0, out, err);
}

int model__yaml_read_split(const char *buf, size_t len, struct model_manifest *out)
{
    /* libyaml reads UTF-16 after its byte order mark, where "\n---" is no line: a cut there
     * fails and the whole is read after all; this saves the two threads the attempt */
    if (len < 2 || (buf[0] == '\xff' && buf[1] == '\xfe') || (buf[0] == '\xfe' && buf[1] == '\xff'))
        return -1;
    const char *cut = marker_from(buf + len / 2, buf + len);
    if (!cut)
        return -1;
    size_t n0 = (size_t)(cut - buf), budget = model__yaml_budget(len);
    size_t b0 = budget / len * n0 + budget % len * n0 / len; /* the first part's share */
    const struct model__part part[2] = {{.buf = buf, .len = n0, .budget = b0},
                                        {.buf = cut, .len = len - n0, .budget = budget - b0}};
    return model__read_parts(read_part, part, out);
}

int model__yaml_stream_parse(const char *buf, size_t len, int want_pos, struct model_manifest *out,
                             struct err *err)
{
    if (!want_pos && len >= MODEL_YAML_SPLIT_BYTES && model__yaml_read_split(buf, len, out) == 0)
        return 0;
    return model__yaml_parse(buf, len, want_pos, out, err);
}
