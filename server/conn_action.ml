type t = Read | Write | Close | Linger | Wait | Detach | Nothing | Read_buffered | Push
