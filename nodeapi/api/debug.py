"""The debug API set (login accessor ``debug``, access name ``debug_api``):
produce or push blocks on demand, change objects, stream changed objects.

Graphene reference: bitshares-core libraries/plugins/debug_witness/
debug_api.cpp and debug_witness.cpp.  Blocks of ``debug_generate_blocks``
are valid here (and after a restart: the replay of the node's own block
log does not check signatures) but other nodes refuse them.  Where
graphene opens a file name as given, this set writes only plain file
names in the operator's ``--api-output-dir``: no path comes from RPC.
Blocks are produced or pushed in batches of :data:`BATCH` with a return to
the node's reactor (``node.reactor``) in between.
"""

import os

import orjson
from twisted.internet import defer, task
from twisted.logger import Logger

from nodeapi.api.arguments import output_path, require_path
from nodeapi.api.base import ApiSet, api_function, fc_int
from nodeapi.chain import authority as auth
from nodeapi.chain.blocklog import BlockLog, BlockLogError
from nodeapi.chain.errors import ChainError
from nodeapi.errors import ApiError
from nodeapi.protocol.wire import with_wire_times

BATCH = 50


class ObjectStream:
    """The file ``debug_stream_json_objects`` writes to: one JSON line per
    object changed by each applied block (a chain block observer)."""

    def __init__(self, chain, path: str) -> None:
        self.chain = chain
        # a symbolic link in the output directory is not followed
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
        self.file = os.fdopen(fd, "wb")  # open until replaced or closed
        chain.add_block_observer(self.block_applied)

    def block_applied(self, applied) -> None:
        """Chain block observer (``applied``: the
        :class:`~nodeapi.applied.AppliedBlock`): the lines bitshares-core's
        debug_witness.cpp writes for a block, in its order: ``{"bn": N}``
        (``on_applied_block``, emitted before the changed objects), then each
        object that existed before the block and that the block changed, as
        a JSON line with wire times
        (:func:`~nodeapi.protocol.wire.with_wire_times`;
        ``on_changed_objects``: the undo session's ``old_values``, so not
        the objects the block created), then ``{"id": "<id>"}`` for each
        such object it removed (``on_removed_objects``); ids sorted by their
        string.  When the block's undo record is not kept
        (:meth:`~nodeapi.chain.chain.Chain.existed_before_last_block` is
        None: a block applied inside a devnet snapshot's session), the
        objects it created are written too."""
        objects = self.chain.state.objects
        before = self.chain.existed_before_last_block()
        write = self.file.write
        write(b'{"bn":%d}\n' % applied.block_num)
        removed = []
        for oid in sorted(self.chain.changed_objects_of_last_block()):
            if before is not None and oid not in before:
                continue  # created by the block (graphene's new_objects)
            obj = objects.get(oid)
            if obj is not None:
                write(orjson.dumps(with_wire_times(obj)) + b"\n")
            else:
                removed.append(oid)
        for oid in removed:
            write(orjson.dumps({"id": oid}) + b"\n")

    def flush(self) -> None:
        """Flush the file (debug_witness.cpp ``flush_json_object_stream``)."""
        self.file.flush()

    def close(self) -> None:
        """Stop observing the chain and close the file."""
        self.chain.remove_block_observer(self.block_applied)
        self.file.close()


class DebugApi(ApiSet):
    """graphene ``debug_api``."""

    name = "debug"
    log = Logger()

    def _count(self, count) -> int:
        count = fc_int(count, "count")
        if not 0 <= count < 1 << 32:
            raise ApiError(f"count must be an integer 0..4294967295, got {count!r}")
        return count

    @api_function
    def debug_generate_blocks(self, debug_key, count: int):
        """Produce ``count`` blocks at the next slots, each by the scheduled
        witness and signed with ``debug_key`` (a WIF private key), whose
        public key becomes that witness' signing key if it was not.
        Answers (a Deferred) with the number of blocks produced.

        :raises ApiError: a count out of range or a malformed key."""
        count = self._count(count)
        chain = self.node.chain
        if not isinstance(debug_key, str):
            raise ApiError("debug_key must be a WIF private key string")
        try:
            public = auth.public_key_of(debug_key, chain.address_prefix)
        except Exception:  # graphenelib/base58 raise assorted errors for bad WIF
            raise ApiError("debug_key is not a valid WIF private key") from None
        return defer.Deferred.fromCoroutine(self._generate(debug_key, public, count))

    async def _generate(self, wif: str, public: str, count: int) -> int:
        chain = self.node.chain
        produced = 0
        while produced < count:
            for _ in range(min(BATCH, count - produced)):
                witness = chain.get_scheduled_witness(1)
                if chain.state.objects[witness]["signing_key"] != public:
                    self.log.info("Modified key for witness {witness}", witness=witness)
                    chain.debug_update({"_action": "update", "id": witness,
                                        "signing_key": public})
                chain.generate_block(chain.get_slot_time(1), witness, wif)
                produced += 1
            if produced < count:
                await task.deferLater(self.node.reactor, 0, lambda: None)
        self.log.info("debug_generate_blocks produced {count} block(s), head {head}",
                      count=produced, head=chain.head_block_num)
        return produced

    @api_function
    def debug_push_blocks(self, src_filename, count: int):
        """Push blocks ``head + 1 ..`` (at most ``count``) read from the
        block log of the data directory ``src_filename``; answers (a
        Deferred) with the number pushed; a block that fails is logged and
        skipped, as graphene.  A directory without a block log pushes
        nothing (graphene ignores what is not a directory).

        :raises ApiError: the block log cannot be opened (locked by a
            running node, damaged)."""
        count = self._count(count)
        require_path(src_filename, "src_filename")
        path = os.path.join(src_filename, "blocks.log")
        if count == 0 or not os.path.isfile(path):
            return 0
        source = BlockLog(path, sync=False)
        try:
            source.open()
        except BlockLogError as exc:
            raise ApiError(str(exc)) from None
        d = defer.Deferred.fromCoroutine(self._push(source, count))
        return d.addBoth(lambda r: (source.close(), r)[1])

    async def _push(self, source, count: int) -> int:
        chain = self.node.chain
        first, pushed = chain.head_block_num + 1, 0
        for i in range(count):
            block = source.read(first + i)
            if block is None:
                self.log.warn("Block log {path} only contained {i} of {n} requested blocks",
                              path=source.path, i=i, n=count)
                break
            try:
                chain.push_block(block)
                pushed += 1
            except ChainError as exc:
                self.log.error("Got exception pushing block {num}: {error}",
                               num=first + i, error=str(exc))
            if (i + 1) % BATCH == 0:
                await task.deferLater(self.node.reactor, 0, lambda: None)
        return pushed

    @api_function
    def debug_update_object(self, update):
        """Apply a debug update ``{"id", "_action", fields...}``
        (:mod:`nodeapi.chain.debug_updates`); answers null."""
        self.node.chain.debug_update(update)
        return None

    @api_function
    def debug_stream_json_objects(self, filename):
        """From now on write every object each applied block changes as a
        JSON line to the file ``filename`` of ``--api-output-dir``
        (replacing an earlier stream); null.

        :raises ApiError: no ``--api-output-dir``, ``filename`` not a plain
            file name (:func:`nodeapi.api.arguments.output_path`), or the
            file cannot be opened (the earlier stream is kept then)."""
        path = output_path(self.node.output_dir, filename, "filename")
        try:
            stream = ObjectStream(self.node.chain, path)
        except (OSError, ValueError) as exc:
            raise ApiError(f"Cannot open {filename}: "
                           f"{getattr(exc, 'strerror', None) or exc}") from None
        old = self.node.debug_streams.pop("json_objects", None)
        if old is not None:
            old.close()
        self.node.debug_streams["json_objects"] = stream
        return None

    @api_function
    def debug_stream_json_objects_flush(self):
        """Flush the stream of :meth:`debug_stream_json_objects`; null."""
        stream = self.node.debug_streams.get("json_objects")
        if stream is not None:
            stream.flush()
        return None
