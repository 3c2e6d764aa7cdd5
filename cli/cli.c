/*
 * cli.c - command-line parsing, dispatch and the helpers every command shares.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "alloc.h"
#include "client.h"
#include "clock.h"
#include "internal.h"
#include "model.h"

#define DEFAULT_SERVER "http://127.0.0.1:8080"

static const char usage_head[] =
    "usage: muster [--server URL] [--token T] [--ca FILE] [--cert FILE --key FILE]\n"
    "              [-o table|json|yaml|name|wide] <command> [args]\n"
    "\n"
    "commands:\n";

static const char usage_tail[] =
    "\n"
    "-o name prints kind/name lines (get, apply, delete); -o wide adds columns (get).\n"
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
    {"server", 0, 1},       {"token", 0, 1},
    {"output", 'o', 1},     {"namespace", 'n', 1},
    {"node", 0, 1},         {"phase", 0, 1},
    {"state", 0, 1},        {"all-namespaces", 'A', 0},
    {"since", 0, 1},        {"until", 0, 1},
    {"from", 0, 1},         {"to", 0, 1},
    {"job", 0, 1},          {"kind", 0, 1},
    {"limit", 0, 1},        {"filename", 'f', 1},
    {"cycles", 0, 1},       {"tick", 0, 1},
    {"help", 'h', 0},       {"victim", 0, 1},
    {"like", 0, 1},         {"pod-cpu", 0, 1},
    {"pod-memory", 0, 1},   {"pod-gpu", 0, 1},
    {"validate", 0, 1},     {"ca", 0, 1},
    {"cert", 0, 1},         {"key", 0, 1},
    {"before", 0, 1},       {"witness", 0, 1},
    {"retired-keys", 0, 1}, {"all", 0, 0},
    {"selector", 'l', 1},   {"field-selector", 0, 1},
    {"watch", 'w', 0},      {"follow", 0, 0},
    {"cordon", 0, 1},       {"delete", 0, 1},
    {"trace", 0, 1},        {"policy-a", 0, 1},
    {"policy-b", 0, 1},     {"out", 0, 1},
    {"horizon", 0, 1},      {"starve", 0, 1},
    {"at", 0, 1},           {"seq", 0, 1},
    {"bundle", 0, 1},       {"db", 0, 1},
    {"by", 0, 1},           {"cluster", 0, 1},
    {"queue", 0, 1},        {"chain", 0, 1},
    {"from-db", 0, 1},      {"quick", 0, 0},
};

/* One row a command: its function, the flags it accepts besides the global ones, the -o
 * values beyond table|json|yaml it honours, and its lines of the usage text (what
 * `muster help` prints, and `muster help CMD` alone). */
struct command {
    const char *name;
    int (*fn)(struct cli *cli);
    const char *flags;   /* ",a,b," */
    const char *outputs; /* ",name,wide," */
    const char *usage;
};

static int cmd_version(struct cli *cli)
{
    printf("muster %s\n", MUSTER_VERSION);
    return CLI_EXIT_OK;
}

static int cmd_help(struct cli *cli);
static int cmd_completion(struct cli *cli);

static const struct command commands[] = {
    {"apply", cli__cmd_apply, ",filename,validate,", ",name,",
     "  apply -f FILE|DIR|- [-f ...] [--validate strict|warn|ignore]\n"
     "                                       create or replace objects from YAML or JSON;\n"
     "                                       every file (a directory's *.yaml, *.yml, *.json\n"
     "                                       in name order) is read and parsed before any\n"
     "                                       is sent, then all go in one atomic request;\n"
     "                                       unknown fields refused (strict, the default),\n"
     "                                       dropped with a warning, or dropped\n"},
    {"get", cli__cmd_get,
     ",namespace,all-namespaces,node,phase,state,selector,field-selector,watch,at,seq,",
     ",name,wide,",
     "  get nodes|pods|podgroups|jobs|clusternetworktopologies|priorityclasses|queues|pdb|\n"
     "      reservations\n"
     "      [NAME] [-n NS | -A] [-l SELECTOR] [--field-selector F=V,...] [--node N]\n"
     "      [--phase P] [--state S] [-w]\n"
     "                                       -w: print the list, then each object again when\n"
     "                                       it changes (a poll a second) until interrupted\n"
     "  get nodes|pods|jobs [NAME] [-n NS | -A] --at T|--seq N\n"
     "                                       as the cluster was at time T (RFC 3339) or\n"
     "                                       audit record N\n"},
    {"delete", cli__cmd_delete, ",namespace,all-namespaces,filename,all,selector,", ",name,",
     "  delete KIND NAME... [-n NS]          delete objects; a job NS/NAME deletes its pods\n"
     "                                       and PodGroup\n"
     "  delete KIND --all|-l SELECTOR [-n NS | -A]\n"
     "                                       delete every object (matching the labels)\n"
     "  delete -f FILE|DIR|- [-f ...]        delete the objects the manifests name\n"},
    {"describe", cli__cmd_describe, ",namespace,", ",",
     "  describe job NS/NAME                 a job, its members and why\n"
     "  describe node NAME                   a node's health, taints, use, pods and\n"
     "                                       nominated pods\n"
     "  describe queue NAME                  a queue's shares, jobs and reclaims\n"},
    {"why", cli__cmd_why, ",namespace,at,seq,", ",",
     "  why NS/NAME [--at T|--seq N]         why a job (or a pod's job) is where it is (or\n"
     "                                       was at time T / audit record N)\n"},
    {"audit", cli__cmd_audit,
     ",since,until,from,to,job,kind,limit,key,filename,before,witness,retired-keys,follow,bundle,"
     "from-db,cluster,chain,quick,",
     ",",
     "  audit export [--since T] [--until T] [--from SEQ] [--to SEQ] [--job J] [--kind K]\n"
     "      [--limit N] [--follow]           the audit log as NDJSON; --follow keeps printing\n"
     "                                       new records (a poll a second) until interrupted\n"
     "  audit verify [--from SEQ] [--to SEQ] verify the audit hash chain (signatures too when\n"
     "                                       musterd has an audit_key)\n"
     "  audit verify --key PUB.pem [--retired-keys OLD.pem,...] [-f FILE|-] [--witness FILE]\n"
     "                                       verify an export offline: chain and signed\n"
     "                                       checkpoints (Ed25519 public or private key);\n"
     "                                       with the witness file, also that it is not cut\n"
     "  audit verify --bundle DIR [--key PUB.pem]\n"
     "                                       verify a post-mortem bundle offline: its audit\n"
     "                                       range's chain and that its timeline is of it\n"
     "  audit verify --from-db URL --cluster C [--chain N] [--key PUB.pem]\n"
     "                                       verify the copy shipped to PostgreSQL\n"
     "  audit prune --before SEQ             delete the records before the newest signed\n"
     "                                       checkpoint at or before SEQ (export them first)\n"
     "  audit replay --from SEQ [--to SEQ] [--quick]\n"
     "                                       run the scheduler again over the recorded inputs\n"
     "                                       (from the last restart at or before SEQ; --quick:\n"
     "                                       from SEQ, the waiting jobs parked anew); any\n"
     "                                       cycle after SEQ that decides otherwise than the\n"
     "                                       log is listed (exit 1)\n"},
    {"postmortem", cli__cmd_postmortem, ",job,since,until,", ",dir,",
     "  postmortem --job NS/NAME [--since T] [--until T] -o DIR\n"
     "                                       a job's whole story as a bundle: timeline\n"
     "                                       (NDJSON, Markdown report, PNG chart), its nodes\n"
     "                                       at each decision, the audit range and its\n"
     "                                       verification (docs/postmortem.md)\n"},
    {"report", cli__cmd_report, ",db,by,since,until,cluster,state,queue,namespace,limit,", ",csv,",
     "  report usage --db URL --by queue|namespace|cluster [--since T] [--until T] [--cluster C]\n"
     "                                       resource-hours and share of each (sreport)\n"
     "  report jobs --db URL [--state S] [--queue Q] [-n NS] [--cluster C] [--since T]\n"
     "      [--until T] [--limit N] [-o table|json|csv]\n"
     "                                       one row per job (sacct)\n"
     "  report waits --db URL [--queue Q] [--cluster C] [--since T] [--until T]\n"
     "                                       wait percentiles by queue and job size\n"
     "      (read from PostgreSQL, no musterd needed; T: RFC 3339 or an age such as 30d,\n"
     "      12h; --since defaults to 30d, --until to now; $MUSTER_DB for --db)\n"},
    {"preemptions", cli__cmd_preemptions, ",job,victim,since,", ",",
     "  preemptions [--job J] [--victim V] [--since T|CYCLE]\n"
     "                                       the preemption ledger\n"},
    {"topology", cli__cmd_topology, ",like,pod-cpu,pod-memory,pod-gpu,", ",",
     "  topology [--like NS/JOB | --pod-cpu Q --pod-memory Q --pod-gpu N]\n"
     "                                       the topology tree, largest gang per domain\n"},
    {"explain", cli__cmd_explain, ",", ",",
     "  explain KIND[.field.path]            a kind's fields, or one field, from the schema\n"
     "                                       muster validates with: type, honoured, known or\n"
     "                                       unsupported (and what it would change)\n"},
    {"whatif", cli__cmd_whatif, ",filename,cordon,delete,", ",",
     "  whatif [-f FILE|DIR|- ...] [--cordon NODE,...] [--delete KIND/NAME,...]\n"
     "                                       what the next cycle would do with these\n"
     "                                       changes: where each job would go or why not,\n"
     "                                       whom it would preempt; nothing is written\n"},
    {"cycle", cli__cmd_cycle, ",", ",",
     "  cycle                                run one scheduling cycle now\n"},
    {"replay", cli__cmd_replay, ",filename,trace,policy-a,policy-b,out,horizon,starve,", ",",
     "  replay -f cluster.yaml --trace jobs.csv [--policy-a A.yaml [--policy-b B.yaml]]\n"
     "      [--out DIR] [--horizon SECONDS] [--starve SECONDS]\n"
     "                                       the scheduler in virtual time on a trace of jobs\n"},
    {"simulate", cli__cmd_simulate, ",filename,cycles,tick,", ",",
     "  simulate -f cluster.yaml [--cycles N] [--tick SECONDS]\n"
     "                                       schedule offline and print the outcome\n"
     "                                       (fields validated as apply --validate strict)\n"},
    {"completion", cmd_completion, ",", ",",
     "  completion bash|zsh                  a completion script: commands, kinds, flags\n"
     "                                       (source <(muster completion bash), or zsh)\n"},
    {"version", cmd_version, ",", ",",
     "  version                              print the version\n"},
    {"help", cmd_help, ",", ",",
     "  help [COMMAND]                       print this text, or one command's\n"},
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static const struct command *find_command(const char *name)
{
    for (size_t i = 0; name && i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

static void print_usage(FILE *out, const struct command *only)
{
    fputs(usage_head, out);
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (!only || only == &commands[i])
            fputs(commands[i].usage, out);
    fputs(usage_tail, out);
}

/* `muster help [COMMAND]`; `muster COMMAND --help` comes here with cli->command set. */
static int cmd_help(struct cli *cli)
{
    const char *name = strcmp(cli->command, "help") == 0 ? cli->pos[0] : cli->command;
    const struct command *c = find_command(name);
    if (name && !c)
        return cli__usage_error(cli, "unknown command '%s'", name);
    print_usage(stdout, c);
    return CLI_EXIT_OK;
}

/* Prints the words of a ",a,b," list as "PREFIXa PREFIXb". */
static void print_list(const char *list, const char *prefix)
{
    int first = 1;
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        if (n) {
            printf("%s%s%.*s", first ? "" : " ", prefix, (int)n, p);
            first = 0;
        }
        p += n + (p[n] == ',');
    }
}

/* The script is written from the tables above, so it names every command and flag. */
static int cmd_completion(struct cli *cli)
{
    size_t i;
    int zsh = cli->npos == 1 && !strcasecmp(cli->pos[0], "zsh");
    if (cli->npos != 1 || (!zsh && strcasecmp(cli->pos[0], "bash") != 0))
        return cli__usage_error(cli, "completion needs a shell: bash or zsh");
    /* zsh runs the bash function through its bashcompinit (as kubectl's first zsh
     * completion did): one set of rules for both shells */
    fputs(zsh ? "#compdef muster\n"
                "# zsh completion for muster: source <(muster completion zsh)\n"
                "autoload -U +X compinit && compinit\n"
                "autoload -U +X bashcompinit && bashcompinit\n"
              : "# bash completion for muster: source <(muster completion bash)\n",
          stdout);
    fputs("_muster()\n{\n"
          "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
          "    local cmd='' npos=0 i w\n"
          "    local valued=' ",
          stdout);
    for (i = 0; i < sizeof(flag_defs) / sizeof(flag_defs[0]); i++)
        if (flag_defs[i].has_value)
            printf(flag_defs[i].shrt ? "--%s -%c " : "--%s ", flag_defs[i].name, flag_defs[i].shrt);
    fputs(
        "'\n"
        "    for ((i = 1; i < COMP_CWORD; i++)); do\n"
        "        w=${COMP_WORDS[i]}\n"
        "        if [[ $valued == *\" $w \"* ]]; then ((i++)); continue; fi\n"
        "        [[ $w == -* ]] && continue\n"
        "        if [[ -z $cmd ]]; then cmd=$w; else ((npos++)); fi\n"
        "    done\n"
        "    case $prev in\n"
        "    -o | --output) COMPREPLY=($(compgen -W 'table json yaml name wide csv' -- \"$cur\")); "
        "return ;;\n"
        "    -f | --filename | --ca | --cert | --key | --witness) COMPREPLY=($(compgen -f -- "
        "\"$cur\")); return ;;\n"
        "    esac\n"
        "    local words=\n"
        "    if [[ $cur == -* ]]; then\n"
        "        words='--server --token --ca --cert --key --output -o --help'\n"
        "        case $cmd in\n",
        stdout);
    for (i = 0; i < NCOMMANDS; i++) {
        printf("        %s) words+=' ", commands[i].name);
        print_list(commands[i].flags, "--");
        fputs("' ;;\n", stdout);
    }
    fputs("        esac\n"
          "    elif [[ -z $cmd ]]; then\n"
          "        words='",
          stdout);
    for (i = 0; i < NCOMMANDS; i++)
        printf("%s%s", i ? " " : "", commands[i].name);
    fputs("'\n"
          "    elif ((npos == 0)); then\n"
          "        case $cmd in\n"
          "        get | delete) words='jobs",
          stdout);
    for (int k = 0; k < MODEL_KIND_COUNT; k++)
        printf(" %s", model_kind_plural((enum model_kind)k));
    fputs("' ;;\n"
          "        describe) words='job node queue' ;;\n"
          "        audit) words='export verify prune' ;;\n"
          "        completion) words='bash zsh' ;;\n"
          "        help) words='",
          stdout);
    for (i = 0; i < NCOMMANDS; i++)
        printf("%s%s", i ? " " : "", commands[i].name);
    fputs("' ;;\n"
          "        esac\n"
          "    fi\n"
          "    COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
          "}\n"
          "complete -F _muster muster\n",
          stdout);
    return CLI_EXIT_OK;
}

/* kubectl's way: the one line that matters, then where the usage is. */
int cli__usage_error(const struct cli *cli, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("error: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    if (find_command(cli->command) && strcmp(cli->command, "help") != 0)
        fprintf(stderr, "\nrun 'muster help %s' for usage\n", cli->command);
    else
        fputs("\nrun 'muster help' for usage\n", stderr);
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
static int parse_args(struct cli *cli, int argc, char **argv)
{
    int only_pos = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (only_pos || a[0] != '-' || a[1] == '\0') {
            if (!cli->command)
                cli->command = a;
            else if (cli->npos < CLI_MAX_POS)
                cli->pos[cli->npos++] = a;
            else
                return cli__usage_error(cli, "too many arguments");
            continue;
        }
        if (strcmp(a, "--") == 0) {
            only_pos = 1;
            continue;
        }
        const char *val;
        const struct flag_def *f = find_flag(a, &val);
        if (!f)
            return cli__usage_error(cli, "unknown flag '%s'", a);
        if (f->has_value && !val) {
            if (i + 1 >= argc)
                return cli__usage_error(cli, "flag '%s' needs a value", a);
            val = argv[++i];
        } else if (!f->has_value && val) {
            return cli__usage_error(cli, "flag '%s' takes no value", a);
        }
        if (cli->nflags == CLI_MAX_FLAGS)
            return cli__usage_error(cli, "too many flags");
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

size_t cli__flag_all(struct cli *cli, const char *name, const char **vals, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < cli->nflags && n < max; i++)
        if (strcmp(cli->flag_name[i], name) == 0)
            vals[n++] = cli->flag_val[i];
    return n;
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
            return cli__usage_error(cli, "flag '--%s' is not accepted by '%s'", n, c->name);
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

static int setup(struct cli *cli, const struct command *c)
{
    const char *o = cli__flag(cli, "output");
    char key[32];
    if (strstr(c->outputs, ",dir,")) /* -o names a directory (postmortem) */
        o = NULL;
    snprintf(key, sizeof(key), ",%s,", o ? o : "");
    if (!o || !strcasecmp(o, "table"))
        cli->output = CLI_OUT_TABLE;
    else if (!strcasecmp(o, "json"))
        cli->output = CLI_OUT_JSON;
    else if (!strcasecmp(o, "yaml"))
        cli->output = CLI_OUT_YAML;
    else if (strcasecmp(o, "name") && strcasecmp(o, "wide") && strcasecmp(o, "csv"))
        return cli__usage_error(
            cli, "unknown output format '%s' (table, json, yaml, name, wide or csv)", o);
    else if (!strcasestr(c->outputs, key))
        return cli__usage_error(cli, "-o %s is not accepted by '%s' (table, json or yaml)", o,
                                c->name);
    else if (!strcasecmp(o, "name"))
        cli->names = 1;
    else if (!strcasecmp(o, "csv"))
        cli->csv = 1;
    else
        cli->wide = 1;
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
    int rc = parse_args(&cli, argc, argv);
    if (rc)
        return rc;
    if (!cli.command) {
        cli.command = "help";
        return cli__flag(&cli, "help") ? cmd_help(&cli)
                                       : cli__usage_error(&cli, "no command given");
    }
    const struct command *c = find_command(cli.command);
    if (!c)
        return cli__usage_error(&cli, "unknown command '%s'", cli.command);
    if (cli__flag(&cli, "help"))
        return cmd_help(&cli);
    if ((rc = check_flags(&cli, c)) != 0 || (rc = setup(&cli, c)) != 0)
        return rc;
    rc = c->fn(&cli);
    client_close(cli.client);
    json_decref(cli.errors);
    return rc;
}

int cli__fail(struct cli *cli, const struct err *err)
{
    const char *top = err->msg[0] ? err->msg : err_name(err->code);
    fprintf(stderr, "error: %s\n", top);
    size_t i;
    json_t *e;
    json_array_foreach(cli->errors, i, e)
    {
        const char *msg = json_string_value(json_object_get(e, "message"));
        if (msg && strcmp(msg, top) == 0)
            continue; /* a syntax error comes back as the message and as its one error */
        if (msg)
            fprintf(stderr, "  %s\n", msg);
        else {
            char *s = json_dumps(e, JSON_COMPACT);
            fprintf(stderr, "  %s\n", s ? s : "?");
            free(s);
        }
    }
    if (err->code == ERR_UNAUTHORIZED)
        fputs(cli->token && *cli->token
                  ? "the token given (--token or MUSTER_TOKEN) was refused: check it\n"
                  : "pass a token with --token TOKEN or the MUSTER_TOKEN environment "
                    "variable\n",
              stderr);
    return CLI_EXIT_FAIL;
}
