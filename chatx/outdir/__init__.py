"""Many files at once: plan the outputs, convert them (in parallel if asked), check them.

``chatx convert FILE… --to FMT[,FMT…] --out-dir DIR`` writes one output per input per
target format, named ``<stem>.<format>.<container>``:

* a file named on the command line goes to ``DIR/<stem>.<format>.<container>``;
* a directory is walked (sorted, hidden entries and symlinked directories left out) for
  :data:`CAPTURE_SUFFIXES`, and each capture keeps its path relative to that directory:
  ``captures/openai/a.sse`` → ``DIR/openai/a.<format>.<container>``. A walk leaves out
  what a previous run wrote into ``DIR`` (files under ``DIR`` named like outputs);
* two inputs that would write the same output, or an output that would overwrite an
  input, stop the run before anything is converted (:class:`~chatx.errors.UsageError`);
* no output path leaves ``DIR``, whatever the input names (``..``, absolute paths,
  symlinks inside ``DIR``): checked when planning and again before writing.

Each job is one (input, target) pair; :func:`run` converts them in order, or in worker
processes with ``workers > 1``, and yields an :class:`Outcome` per job in job order, so a
parallel run says and writes exactly what a serial one does. An output file is rewritten
only when its bytes change (unchanged outputs keep their mtime). ``check=True`` writes
nothing and says whether each output is ``unchanged``, ``stale`` or ``missing``. A job
that fails is an outcome, not an exception: the others go on.

Four modules, in the run's order: :mod:`~chatx.outdir.walking` (what a walk finds),
:mod:`~chatx.outdir.planning` (the jobs and their outputs), :mod:`~chatx.outdir.sources`
(the streams they read, a file of recorded exchanges read once for all its jobs),
:mod:`~chatx.outdir.running` (converting, writing or checking, counting).
"""
