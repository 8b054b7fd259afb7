/* report_page.c — the page around the data: HTML skeleton, the stylesheet
 * and script (src/report/assets/, embedded at build time by mk/report.mk),
 * and the data as one JSON document in a <script type="application/json">
 * element (written HTML-safe, so no string in it can close the element).
 *
 * A Content-Security-Policy meta element forbids every network load: the
 * page can only use what it carries. The one script allowed to run is the
 * page's own, named by its SHA-256: a name or path that slipped past an
 * escape could not run script, neither as an element nor as an inline
 * event handler (the script sets its handlers with addEventListener). */
#include "report/report_int.h"

#include "report/assets.h"
#include "common/sha256.h"

#include <stdlib.h>

/* U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069 at s (UTF-8): the
 * bidirectional formatting characters; their length, else 0. */
static int bidi_len(const unsigned char *s)
{
    if (s[0] == 0xd8 && s[1] == 0x9c)
        return 2;
    if (s[0] != 0xe2 || !s[1] || !s[2])
        return 0;
    if (s[1] == 0x80 && (s[2] == 0x8e || s[2] == 0x8f || (s[2] >= 0xaa && s[2] <= 0xae)))
        return 3;
    if (s[1] == 0x81 && s[2] >= 0xa6 && s[2] <= 0xa9)
        return 3;
    return 0;
}

static void html_escape(FILE *out, const char *s)
{
    for (; *s; s++) {
        int b = bidi_len((const unsigned char *)s);
        if (b) { /* shown, not obeyed: it would reorder the text after it */
            fputs("&#x27e8;bidi&#x27e9;", out);
            s += b - 1;
            continue;
        }
        switch (*s) {
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '&': fputs("&amp;", out); break;
        case '"': fputs("&quot;", out); break;
        default:
            /* control bytes never reach the page */
            if ((unsigned char)*s < 0x20 && *s != '\t')
                fputc(' ', out);
            else
                fputc(*s, out);
        }
    }
}

static int write_data(rep *r, pk_err *err)
{
    pk_json *j = &r->j;
    pk_json_init(j, r->out);
    j->compact = true;
    j->html_safe = true;
    pk_json_begin_object(j, NULL);
    pk_json_u64(j, "version", 1);
    rep_json_summary(r);
    rep_json_functions(r);
    rep_json_tree(r);
    if (rep_json_decisions(r, err) || rep_json_overlap(r, err) || rep_json_sources(r, err))
        return -1;
    /* last: every section above has named what it uses */
    pk_json_begin_array(j, "names");
    for (size_t i = 0; i < r->names.len; i++) {
        pk_name_id id = PK_VEC_AT(&r->names, pk_name_id, i);
        pk_json_str(j, NULL, pk_demangle_text(&r->dm, pk_profset_name(r->ps, id)));
    }
    pk_json_end_array(j);
    pk_json_end_object(j);
    return 0;
}

int pk_report_build(const pk_report_input *in, char **html, size_t *len, pk_err *err)
{
    *html = NULL;
    *len = 0;
    rep r;
    memset(&r, 0, sizeof r);
    r.in = in;
    r.ps = in->ps;
    r.dm.off = in->no_demangle;
    char *buf = NULL;
    size_t size = 0;
    r.out = open_memstream(&buf, &size);
    if (!r.out)
        return pk_err_errno(err, "report: cannot open a memory stream");
    int rc = rep_model_build(&r, err);
    /* the script element's text, exactly as written below */
    static const char script_head[] = "\n";
    size_t script_len = strlen(script_head) + strlen(pk_asset_report_js);
    char *script = malloc(script_len + 1);
    char script_hash[48] = "";
    if (script) {
        uint8_t digest[32];
        snprintf(script, script_len + 1, "%s%s", script_head, pk_asset_report_js);
        pk_sha256(script, script_len, digest);
        pk_base64(digest, sizeof digest, script_hash);
    } else {
        rc = pk_err_set(err, "report: out of memory");
    }
    if (!rc) {
        fprintf(r.out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                       "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                       "style-src 'unsafe-inline'; script-src 'sha256-%s'; img-src data:; base-uri 'none'; "
                       "form-action 'none'\">\n"
                       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>",
                script_hash);
        if (in->title) {
            html_escape(r.out, in->title);
        } else {
            fputs("pgokit report: ", r.out);
            html_escape(r.out, in->profile_path ? in->profile_path : "profile");
        }
        fputs("</title>\n<style>\n", r.out);
        fputs(pk_asset_report_css, r.out);
        fputs("</style>\n</head>\n<body>\n<header><h1 id=\"pk-title\">", r.out);
        if (in->title) {
            html_escape(r.out, in->title);
        } else {
            fputs("pgokit report: ", r.out);
            html_escape(r.out, in->profile_path ? in->profile_path : "profile");
        }
        fputs("</h1><p id=\"pk-summary\"></p><nav id=\"pk-nav\"></nav></header>\n"
              "<main id=\"pk-main\"><noscript>This report draws its tables and charts with JavaScript.</noscript>"
              "</main>\n<script type=\"application/json\" id=\"pk-data\">",
              r.out);
        rc = write_data(&r, err);
        fputs("</script>\n<script>", r.out);
        fputs(script, r.out);
        fputs("</script>\n</body>\n</html>\n", r.out);
    }
    free(script);
    rep_model_free(&r);
    pk_demangler_free(&r.dm);
    bool bad = ferror(r.out) != 0;
    if (fclose(r.out) || bad) {
        free(buf);
        return rc ? -1 : pk_err_set(err, "report: out of memory building the page");
    }
    if (rc) {
        free(buf);
        return -1;
    }
    *html = buf;
    *len = size;
    return 0;
}
