-- odd: parameters no query can use
-- param: = 1  (no name)
-- param: ::x = 2  (two colons)
-- param: a b = 3  (a blank)
-- param: :ok = 4  (this one)
SELECT coalesce(:ok, 4);
