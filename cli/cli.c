/*
 * cli.c - command-line parsing, dispatch and the helpers every command shares.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "client.h"
#include "clock.h"
#include "internal.h"
#include "model.h"

#define DEFAULT_SERVER "http://127.0.0.1:8080"

static const char usage_text[] =
    "usage: muster [--server URL] [--token T] [--ca FILE] [--cert FILE --key FILE]\n"
    "              [-o table|json|yaml] <command> [args]\n"
    "\n"
    "commands:\n"
    "  apply -f FILE|- [--validate strict|warn|ignore]\n"
    "                                       create or replace objects from YAML or JSON;\n"
    "                                       unknown fields refused (strict, the default),\n"
    "                                       dropped with a warning, or dropped\n"
    "  get nodes|pods|podgroups|jobs|clusternetworktopologies|priorityclasses|queues|pdb\n"
    "      [NAME] [-n NS | -A] [--node N] [--phase P] [--state S]\n"
    "  delete KIND NAME [-n NS]             delete an object\n"
    "  describe job NS/NAME                 a job, its members and why\n"
    "  describe queue NAME                  a queue's shares, jobs and reclaims\n"
    "  why NS/NAME                          why a job (or a pod's job) is where it is\n"
    "  audit export [--since T] [--until T] [--from SEQ] [--to SEQ] [--job J] [--kind K]\n"
    "      [--limit N]                      the audit log as NDJSON\n"
    "  audit verify [--from SEQ] [--to SEQ] verify the audit hash chain (signatures too when\n"
    "                                       musterd has an audit_key)\n"
    "  audit verify --key PUB.pem [--retired-keys OLD.pem,...] [-f FILE|-] [--witness FILE]\n"
    "                                       verify an export offline: chain and signed\n"
    "                                       checkpoints (Ed25519 public or private key);\n"
    "                                       with the witness file, also that it is not cut\n"
    "  audit prune --before SEQ             delete the records before the newest signed\n"
    "                                       checkpoint at or before SEQ (export them first)\n"
    "  preemptions [--job J] [--victim V] [--since T|CYCLE]\n"
    "                                       the preemption ledger\n"
    "  topology [--like NS/JOB | --pod-cpu Q --pod-memory Q --pod-gpu N]\n"
    "                                       the topology tree, largest gang per domain\n"
    "  cycle                                run one scheduling cycle now\n"
    "  simulate -f cluster.yaml [--cycles N] [--tick SECONDS]\n"
    "                                       schedule offline and print the outcome\n"
    "                                       (fields validated as apply --validate strict)\n"
    "  version                              print the version\n"
    "  help                                 print this text\n"
    "\n"
    "https://: --ca FILE verifies musterd's certificate against that CA (default: the\n"
    "system's CAs); --cert and --key present a client certificate (mTLS).\n"
    "\n"
    "environment: MUSTER_SERVER (default " DEFAULT_SERVER "), MUSTER_TOKEN, MUSTER_CA,\n"
    "MUSTER_CERT, MUSTER_KEY\n";

struct flag_def {
    const char *name;
    char shrt;
    int has_value;
};

static const struct flag_def flag_defs[] = {
    {"server", 0, 1},   {"token", 0, 1},   {"output", 'o', 1},     {"namespace", 'n', 1},
    {"node", 0, 1},     {"phase", 0, 1},   {"state", 0, 1},        {"all-namespaces", 'A', 0},
    {"since", 0, 1},    {"until", 0, 1},   {"from", 0, 1},         {"to", 0, 1},
    {"job", 0, 1},      {"kind", 0, 1},    {"limit", 0, 1},        {"filename", 'f', 1},
    {"cycles", 0, 1},   {"tick", 0, 1},    {"help", 'h', 0},       {"victim", 0, 1},
    {"like", 0, 1},     {"pod-cpu", 0, 1}, {"pod-memory", 0, 1},   {"pod-gpu", 0, 1},
    {"validate", 0, 1}, {"ca", 0, 1},      {"cert", 0, 1},         {"key", 0, 1},
    {"before", 0, 1},   {"witness", 0, 1}, {"retired-keys", 0, 1},
};

struct command {
    const char *name;
    int (*fn)(struct cli *cli);
    const char *flags; /* accepted flags besides the global ones, ",a,b," */
};

static int cmd_version(struct cli *cli)
{
    printf("muster %s\n", MUSTER_VERSION);
    return CLI_EXIT_OK;
}

static int cmd_help(struct cli *cli)
{
    fputs(usage_text, stdout);
    return CLI_EXIT_OK;
}

static const struct command commands[] = {
    {"apply", cli__cmd_apply, ",filename,validate,"},
    {"get", cli__cmd_get, ",namespace,all-namespaces,node,phase,state,"},
    {"delete", cli__cmd_delete, ",namespace,"},
    {"describe", cli__cmd_describe, ",namespace,"},
    {"why", cli__cmd_why, ",namespace,"},
    {"audit", cli__cmd_audit,
     ",since,until,from,to,job,kind,limit,key,filename,before,witness,retired-keys,"},
    {"cycle", cli__cmd_cycle, ","},
    {"topology", cli__cmd_topology, ",like,pod-cpu,pod-memory,pod-gpu,"},
    {"preemptions", cli__cmd_preemptions, ",job,victim,since,"},
    {"simulate", cli__cmd_simulate, ",filename,cycles,tick,"},
    {"version", cmd_version, ","},
    {"help", cmd_help, ","},
};

int cli__usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs("\n\n", stderr);
    va_end(ap);
    fputs(usage_text, stderr);
    return CLI_EXIT_USAGE;
}

static const struct flag_def *find_flag(const char *arg, const char **inline_val)
{
    *inline_val = NULL;
    if (arg[1] == '-') {
        const char *name = arg + 2;
        const char *eq = strchr(name, '=');
        size_t n = eq ? (size_t)(eq - name) : strlen(name);
        for (size_t i = 0; i < sizeof(flag_defs) / sizeof(flag_defs[0]); i++)
            if (strlen(flag_defs[i].name) == n && strncmp(flag_defs[i].name, name, n) == 0) {
                *inline_val = eq ? eq + 1 : NULL;
                return &flag_defs[i];
            }
        return NULL;
    }
    for (size_t i = 0; i < sizeof(flag_defs) / sizeof(flag_defs[0]); i++)
        if (flag_defs[i].shrt && flag_defs[i].shrt == arg[1]) {
            *inline_val = arg[2] ? arg + 2 : NULL;
            if (*inline_val && **inline_val == '=')
                (*inline_val)++;
            return &flag_defs[i];
        }
    return NULL;
}

/* Collects flags and positionals; the first positional is the command. */
static int parse_args(struct cli *cli, int argc, char **argv, const char **cmd)
{
    int only_pos = 0;
    *cmd = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (only_pos || a[0] != '-' || a[1] == '\0') {
            if (!*cmd)
                *cmd = a;
            else if (cli->npos < CLI_MAX_POS)
                cli->pos[cli->npos++] = a;
            else
                return cli__usage_error("too many arguments");
            continue;
        }
        if (strcmp(a, "--") == 0) {
            only_pos = 1;
            continue;
        }
        const char *val;
        const struct flag_def *f = find_flag(a, &val);
        if (!f)
            return cli__usage_error("unknown flag '%s'", a);
        if (f->has_value && !val) {
            if (i + 1 >= argc)
                return cli__usage_error("flag '%s' needs a value", a);
            val = argv[++i];
        } else if (!f->has_value && val) {
            return cli__usage_error("flag '%s' takes no value", a);
        }
        if (cli->nflags == CLI_MAX_FLAGS)
            return cli__usage_error("too many flags");
        cli->flag_name[cli->nflags] = f->name;
        cli->flag_val[cli->nflags++] = f->has_value ? val : "";
    }
    return 0;
}

const char *cli__flag(struct cli *cli, const char *name)
{
    const char *v = NULL;
    for (size_t i = 0; i < cli->nflags; i++)
        if (strcmp(cli->flag_name[i], name) == 0)
            v = cli->flag_val[i]; /* the last one wins, as with getopt */
    return v;
}

int cli__flag_u64(struct cli *cli, const char *name, uint64_t *out, struct err *err)
{
    const char *v = cli__flag(cli, name);
    if (!v)
        return 0;
    char *end = NULL;
    if (*v < '0' || *v > '9')
        return err_set(err, ERR_INVALID, "flag '--%s' needs a non-negative integer, got '%s'", name,
                       v);
    unsigned long long x = strtoull(v, &end, 10);
    if (*end)
        return err_set(err, ERR_INVALID, "flag '--%s' needs a non-negative integer, got '%s'", name,
                       v);
    *out = x;
    return 0;
}

static int check_flags(struct cli *cli, const struct command *c)
{
    for (size_t i = 0; i < cli->nflags; i++) {
        const char *n = cli->flag_name[i];
        if (!strcmp(n, "server") || !strcmp(n, "token") || !strcmp(n, "output") ||
            !strcmp(n, "help") || !strcmp(n, "ca") || !strcmp(n, "cert") || !strcmp(n, "key"))
            continue;
        char key[64];
        snprintf(key, sizeof(key), ",%s,", n);
        if (!strstr(c->flags, key))
            return cli__usage_error("flag '--%s' is not accepted by '%s'", n, c->name);
    }
    return 0;
}

/* A flag's value, else the environment variable's; NULL when neither or empty. */
static const char *flag_or_env(struct cli *cli, const char *flag, const char *env)
{
    const char *v = cli__flag(cli, flag);
    if (!v)
        v = getenv(env);
    return v && *v ? v : NULL;
}

static int setup(struct cli *cli)
{
    const char *o = cli__flag(cli, "output");
    if (!o || !strcmp(o, "table") || !strcmp(o, "wide"))
        cli->output = CLI_OUT_TABLE;
    else if (!strcmp(o, "json"))
        cli->output = CLI_OUT_JSON;
    else if (!strcmp(o, "yaml"))
        cli->output = CLI_OUT_YAML;
    else
        return cli__usage_error("unknown output format '%s' (table, json or yaml)", o);
    cli->server = cli__flag(cli, "server");
    if (!cli->server)
        cli->server = getenv("MUSTER_SERVER");
    if (!cli->server || !*cli->server)
        cli->server = DEFAULT_SERVER;
    cli->token = cli__flag(cli, "token");
    if (!cli->token)
        cli->token = getenv("MUSTER_TOKEN");
    cli->ca = flag_or_env(cli, "ca", "MUSTER_CA");
    cli->cert = flag_or_env(cli, "cert", "MUSTER_CERT");
    cli->key = flag_or_env(cli, "key", "MUSTER_KEY");
    cli->now_ms = clock_now_ms();
    return 0;
}

int cli_main(int argc, char **argv)
{
    struct cli cli = {0};
    const char *cmd;
    int rc = parse_args(&cli, argc, argv, &cmd);
    if (rc)
        return rc;
    if (!cmd)
        return cli__flag(&cli, "help") ? cmd_help(&cli) : cli__usage_error("no command given");
    const struct command *c = NULL;
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (strcmp(commands[i].name, cmd) == 0)
            c = &commands[i];
    if (!c)
        return cli__usage_error("unknown command '%s'", cmd);
    if (cli__flag(&cli, "help"))
        return cmd_help(&cli);
    if ((rc = check_flags(&cli, c)) != 0 || (rc = setup(&cli)) != 0)
        return rc;
    rc = c->fn(&cli);
    client_close(cli.client);
    json_decref(cli.errors);
    return rc;
}

int cli__fail(struct cli *cli, const struct err *err)
{
    fprintf(stderr, "error: %s\n", err->msg[0] ? err->msg : err_name(err->code));
    size_t i;
    json_t *e;
    json_array_foreach(cli->errors, i, e)
    {
        const char *msg = json_string_value(json_object_get(e, "message"));
        if (msg)
            fprintf(stderr, "  %s\n", msg);
        else {
            char *s = json_dumps(e, JSON_COMPACT);
            fprintf(stderr, "  %s\n", s ? s : "?");
            free(s);
        }
    }
    return CLI_EXIT_FAIL;
}
