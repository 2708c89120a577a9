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

    Allocates (a rate table of 640 KiB per distinct rate, each user file
    read); never per request. *)

type t = {
  site : Httpz_server.Guard.t option;  (** [None]: nothing to check *)
  locations : Httpz_server.Guard.t option array;  (** in the order of {!Conf_file.site.locations} *)
}

val create : Conf_file.t -> (t list, string) result
(** [create conf]: one per site, in order; or the first error as
    ["FILE:LINE:COL: message"], at the directive at fault (a user file
    that cannot be read or holds a refused hash, [auth_basic] without a
    user file). *)
