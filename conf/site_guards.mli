(** The guards ({!Httpz_server.Guard}) of a configuration's sites and
    locations, built from their access-control directives
    ({!Conf_access}): a location's are its own, kind by kind, else its
    site's. Built by {!Sites.create} (so by [serve] at start and on every
    reload: a changed user file is read again) and by [httpz check].

    Locations whose directives come to the same guard (a location that
    sets none has its site's) share one {!Httpz_server.Guard.t}, with its
    rate table and password cache: a client's requests to them count
    against one rate. A location with a guard of its own (other address
    rules, another password) counts its requests in its own table.

    {b Zones.} A rate table is a {!Httpz_server.Limit_zone}, memory
    shared by the workers forked after it is made (this runs in the
    supervisor, before it forks them): [limit_req zone=NAME] in several
    blocks counts in one table, the zone's. On a reload (the file read
    again in the supervisor), a zone of the same name, key and size
    keeps its table, so its counts (and its secret) carry over to the
    new generation of workers, which counts in it alongside the old one
    while the old one finishes (nginx keeps a zone whose size did not
    change); a changed zone starts empty. An unnamed [limit_req RATE
    BURST] is kept when its rate, burst and key are unchanged.

    Allocates (a rate table per distinct zone: 512 KiB by default, each
    user file read); never per request. *)

type t = {
  site : Httpz_server.Guard.t option;  (** [None]: nothing to check *)
  locations : Httpz_server.Guard.t option array;  (** in the order of {!Conf_file.site.locations} *)
}

val create : Conf_file.t -> (t list, string) result
(** [create conf]: one per site, in order; or the first error as
    ["FILE:LINE:COL: message"], at the directive at fault (a user file
    that cannot be read or holds a refused hash, [auth_basic] without a
    user file). *)
