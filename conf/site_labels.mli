(** The sites of a configuration file as the status totals label them
    ({!Httpz_server.Request_metrics}): a site by its first name
    ([site a.example www.a.example { … }] is ["a.example"]), the one site
    of a file without site blocks as ["default"]; a request's site found
    from its [Host] as {!Sites} finds it ({!Host_match}, the same names
    and default). *)

val register : Conf_file.t -> unit
(** [register conf] hands the sites of [conf] to
    {!Httpz_server.Request_metrics.set_sites}: call it where the file is
    read for serving, before the workers fork (at start and on each
    reload). Allocates. *)

val label : Conf_file.site -> string
(** [label site]: its first name, or ["default"]. *)
