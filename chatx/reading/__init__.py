"""Reading an input, one step per module, in the order an input goes through them:

1. :mod:`chatx.reading.opening`: a file, stdin or ``FILE#N`` opened below every container
   (decompressed, a bare stream told from a file of recorded exchanges);
2. :mod:`chatx.reading.finding`: the streams such a file holds, each exchange's body told
   a stream, an object chatx reads, or something else;
3. :mod:`chatx.reading.framing`: a stream's bytes framed into records, whole or as they
   arrive;
4. :mod:`chatx.reading.decoding`: records decoded into IR batches, without an encoder
   (``convert`` runs the same decoders in :class:`chatx.pipeline.Transcoder`).
"""
