(** The handler of a configuration file: the request's [Host] picks a
    site ({!Host_match}), its decoded path a location ({!Rules}), and the
    location's action answers, through the site's own static handler
    ({!Httpz_static.Static}, one per site: its own root, file cache and
    settings).

    Per request, with a location or without: the site is found by
    comparing the [Host] span in place, the path is decoded once into the
    site's buffer and compared in place, and the answer takes the
    location's precomputed rule; nothing is allocated on the way
    (test/conf checks it), beyond what the static handler's answer itself
    allocates (nothing for a file, see {!Httpz_static.Static}).

    - An unknown host gets the default site, or [421 Misdirected Request]
      / [404] with [unknown_host].
    - [return] answers its status: a redirect with [Location], a text as
      [text/plain], or the site's error page of that status.
    - [rewrite] replaces the path; [internal] answers 404 to a request
      that asks for it (the location's files still serve as error pages,
      which the static handler opens itself, and after an internal
      redirect); [try_files] answers the fallback path when the file is
      not found.
    - Internal redirects (nginx's): the path a [rewrite] makes, a
      [try_files] fallback and a directory's index file are served under
      the location they fall in, not the one requested (the static
      handler hands them back, {!Httpz_static.Static.answer}): that
      location's access control, headers and action apply. A guard the
      request has already passed is not asked again. The 11th redirect of
      a request answers 500 (a cycle, as nginx) and logs it.
    - A request without [Host] (HTTP/1.0) gets the default site.
    - Access control runs after the location is found and before any
      answer, [return] and [internal] included: the location's guard
      (its own directives, kind by kind, else its site's) answers 403,
      429 or 401, or lets the request through without allocating
      ({!Httpz_server.Guard.admit}). *)

type t

val create : Conf_file.t -> (t, string) result
(** [create conf] builds the guards of the sites and locations
    ({!Site_guards}: reads every user file, makes the rate tables), opens
    every site's root and builds its rules. [Error] is
    ["FILE:LINE:COL: message"] at the first directive at fault (a user
    file that cannot be read, a root that cannot be used). Allocates;
    opens one directory per site. [serve --config] runs it again on each
    [SIGHUP], so a changed user file is read by the new workers. *)

val handler : t -> Httpz_server.Ctx.t -> unit
(** [handler t c] answers the request of [c]. *)

val close : t -> unit
(** [close t] closes the sites' root directories (the supervisor's copies
    after a reload: the workers have theirs). *)
