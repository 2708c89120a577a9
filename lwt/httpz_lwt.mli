(** Lwt code in httpz handlers, on the worker's own event loop.

    Most OCaml client libraries (databases, HTTP clients, caches) return
    Lwt promises. This adapter makes the worker's loop Lwt's engine — an
    [Lwt_engine] whose descriptors and timers are {!Httpz_server.Reactor}
    watches and timers, so Lwt's I/O and sleeps run between the server's
    connection events, in the same thread, with no second loop — and lets
    a handler wait for a promise:

    {[
      let handler c =
        Httpz_lwt.await c (Db.find_user id) (fun user c ->
            Ctx.start c Status.Ok;
            Ctx.body_string c user.name)
    ]}

    Never call [Lwt_main.run] in a handler: the server's loop is already
    running Lwt. The engine is installed in each worker on the first
    {!await} (or by {!install}); promises created before that, at start-up,
    are carried over ([Lwt_engine.set] transfers their events). *)

val install : unit -> unit
(** [install ()] makes this worker's loop Lwt's engine (idempotent). Call it
    from a handler or after the server started; {!await} calls it. *)

val await : Httpz_server.Ctx.t -> 'a Lwt.t -> ('a -> Httpz_server.Ctx.t -> unit) -> unit
(** [await c p k]: return from the handler now; when [p] resolves with [v],
    [k v c] runs on the loop and answers (or waits again). If [p] is
    already resolved, [k] runs at once. A rejected [p] makes the answer a
    500 (as a handler that raises). If the request ends first (the client
    left, the handler timeout), [p] is cancelled ([Lwt.cancel]). *)

(**/**)

class engine : Httpz_server.Reactor.t -> object
  inherit Lwt_engine.abstract
  method iter : bool -> unit
  method private cleanup : unit
  method private register_readable : Unix.file_descr -> (unit -> unit) -> unit Lazy.t
  method private register_writable : Unix.file_descr -> (unit -> unit) -> unit Lazy.t
  method private register_timer : float -> bool -> (unit -> unit) -> unit Lazy.t
end
