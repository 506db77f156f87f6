"""``subtok count``: the training units of a corpus with their counts, and
``subtok count --merge``: the sum of count files.

The flags that shape what a trainer sees are spm_train's (same names,
defaults and help); the file format and the spilling are in
:mod:`subtok.training.counts`. ``--scheduler`` counts on a Dask cluster
(:mod:`subtok.dask`, the optional extra ``subtok[dask]``).
"""

from __future__ import annotations

import click

from subtok.cli.options import Command, option
from subtok.cli.train import option_decorators
from subtok.flags import split_csv
from subtok.training.spec import LIST_FIELDS

def _apply(func):
    """Every flag of ``subtok train``: a recipe's flags work unchanged; those
    that do not shape the units (``--vocab_size``, ...) have no effect."""
    for decorator in reversed(option_decorators()):
        func = decorator(func)
    return func


@click.command("count", cls=Command)
@option("output", required=True, help="The count file to write (unit<TAB>count, with a header).")
@option("merge", is_flag=True, default=False,
        help="Sum the count files given as arguments (made with the same options).")
@option("max_memory", default="1G", show_default=True,
        help="Size of the count table before it spills sorted runs to --tmp_dir (e.g. 512M, 2G).")
@option("tmp_dir", default=None, help="Directory for spilled runs [default: $TMPDIR or /tmp].")
@option("scheduler", default=None,
        help="Count on Dask: local:N (a LocalCluster of N processes) or tcp://HOST:PORT "
             "(needs subtok[dask]).")
@option("chunk_size", default=None,
        help="With --scheduler: count files larger than this in byte ranges of about this "
             "size, one task each (e.g. 64M, 1G) [default: 128M].")
@click.argument("files", nargs=-1)
@_apply
def count_command(output, merge, max_memory, tmp_dir, scheduler, chunk_size, files, **kwargs) -> None:
    """Count the units a trainer would see (or, with --merge, sum count files)."""
    from subtok.training import counts

    if merge:
        paths = list(files) + [p for value in kwargs["input"] for p in split_csv(value)]
        if len(paths) < 1:
            raise click.UsageError("--merge needs the count files to sum.")
        counts.merge(paths, output)
        return
    if files:
        raise click.UsageError("unexpected arguments %s: give the corpus with --input "
                               "(or sum count files with --merge)." % " ".join(files))
    for name in LIST_FIELDS:
        if name in kwargs:
            kwargs[name] = [item for value in kwargs[name] for item in split_csv(value)]
    if not kwargs["input"]:
        raise click.UsageError("--input is required (files, comma-separated, or - for stdin).")
    if scheduler:
        from subtok.dask import DEFAULT_CHUNK_SIZE, count_on_cluster
        count_on_cluster(output, scheduler=scheduler, chunk_size=chunk_size or DEFAULT_CHUNK_SIZE,
                         max_memory=max_memory, tmp_dir=tmp_dir, **kwargs)
        return
    if chunk_size is not None:
        raise click.UsageError("--chunk_size splits files into Dask tasks: it needs --scheduler.")
    kwargs.pop("model_prefix", None)
    counts.count(output, max_memory=max_memory, tmp_dir=tmp_dir, **kwargs)


__all__ = ["count_command"]
