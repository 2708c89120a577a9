(** The syntax tree of a configuration file: directives, each a name,
    arguments and an optional block of directives, with the positions
    messages need. Allocates; start-up, [httpz check] and reloads only.

    {v
    # a comment
    listen 8443 tls;
    site example.com *.example.com {
        root /srv/www;
        location /assets/ { header Cache-Control "public, max-age=31536000, immutable"; }
    }
    v}

    A directive is a bare word, then arguments (bare words or quoted
    strings), then either [;] or a block in braces (which is not followed
    by [;]). What the names mean is {!Conf_file}'s business. *)

type pos = Conf_lexer.pos = { file : string; line : int; col : int }

type arg = { value : string; quoted : bool; apos : pos }

type directive = {
  name : string;
  npos : pos;  (** where the name starts *)
  args : arg list;
  block : directive list option;  (** [Some] for [name args { ... }] *)
}

type error = Conf_lexer.error = { pos : pos; message : string }

val slurp : string -> string
(** [slurp path] is the whole file. @raise Sys_error *)

val parse : ?file:string -> ?base:string -> blocks:string list -> string -> (directive list, error) result
(** [parse ?file ?base ~blocks text] is the directives of [text] (read
    from [file], which positions name) at the top level, or the first
    lexical or syntax error.

    [include PATTERN;] anywhere is replaced by the directives of the files
    it names, at its own level (so a site's block may include its
    locations): a relative [PATTERN] is resolved against [base] (default:
    [file]'s directory — the main file's, for includes in included files
    too, as nginx resolves them against its prefix). A wildcard ([*], [?],
    [[...]], a leading dot matched only explicitly) may appear in the
    file-name part; matches are read in sorted order, and a pattern that
    matches nothing is no error, while a plain path that cannot be read
    is. Includes nest at most 8 files deep, a file that includes itself
    (through any chain) is an error, and at most 1024 files are read per
    parse. Positions in an included file name that file. Only the directives named in
    [blocks] may open a block: a [{] after another one is reported at that
    directive as a missing [;], which is what a forgotten [;] before a
    block looks like. Blocks nest at most 8 deep (a valid file needs 2):
    deeper is an error at the [{] that goes too deep, so no file can
    exhaust the stack. *)
