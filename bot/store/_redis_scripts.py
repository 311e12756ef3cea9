"""The Redis store's Lua scripts: reads-then-writes, atomic on the server."""

# ARGV: the event's score; removes one member with exactly that score
UNHIT = """
local found = redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[1], ARGV[1], 'LIMIT', 0, 1)
if found[1] then
    return redis.call('ZREM', KEYS[1], found[1])
end
return 0
"""

# ARGV: cutoff (events at or before it have left), now, limit, ttl ms, a unique member.
# Returns nothing when the event was recorded, else the oldest event's score ('' if none).
HIT = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
    local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
    return oldest[2] or ''
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[5])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return false
"""

# A batch (`Store.batch`) in one round trip, atomic on the server. Per operation, 5 ARGV:
# kind, the 1-based index of the operation it depends on (0: none), value, expected, ttl ms
# (the amount for incr); and 2 KEYS: the key and its window's key (for delete).
BATCH = """
local results = {}
for i = 1, #ARGV / 5 do
    local base = (i - 1) * 5
    local kind, cond = ARGV[base + 1], tonumber(ARGV[base + 2])
    local value, expected, ttl = ARGV[base + 3], ARGV[base + 4], ARGV[base + 5]
    local key, window = KEYS[i * 2 - 1], KEYS[i * 2]
    local r = 0
    if cond == 0 or results[cond] == 1 then
        if kind == 'set' then
            redis.call('SET', key, value, 'PX', ttl)
        elseif kind == 'add' then
            if redis.call('SET', key, value, 'PX', ttl, 'NX') then r = 1 end
        elseif kind == 'replace' then
            if redis.call('GET', key) == expected then
                redis.call('SET', key, value, 'PX', ttl)
                r = 1
            end
        elseif kind == 'delete' then
            redis.call('DEL', key, window)
        elseif kind == 'delete_if' then
            if redis.call('GET', key) == expected then r = redis.call('DEL', key) end
        elseif kind == 'incr' then
            local current = redis.call('GET', key)
            if current and string.match(current, '^%-?%d+$') then
                r = redis.call('INCRBY', key, expected)
            else
                redis.call('SET', key, expected, 'PX', ttl)
                r = tonumber(expected)
            end
        end
    end
    results[i] = r
end
return results
"""
