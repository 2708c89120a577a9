type t = Read | Write | Close | Linger | Wait | Detach | Nothing
