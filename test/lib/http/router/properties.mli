(** The router's properties: agreement with {!Reference} on random route
    sets and paths (results, winners, parameters, Allow, prefixes, slash
    redirects), reachability of every route with exactly its parameters,
    and no exception on random bytes. *)

val all : QCheck2.Test.t list
