"""What serve counts: each upstream call's billed usage and its direct estimate
(:mod:`.bill`), the control group's arms (:mod:`.arms`), and the ``/metrics`` exposition
(:mod:`.metrics`). It may import serve's shared types and the other rooms (:mod:`..sessions`'
records); never an API package."""
