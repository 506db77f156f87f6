"""``subtok normalize``: text lines through a normalizer, like spm_normalize.

As ``spm_normalize_main.cc``: the rules come from ``--model`` (its
NormalizerSpec), else ``--normalization_rule_tsv``, else
``--normalization_rule_name``. Unless ``--use_internal_normalization``, the
output is for people, not for segmentation: no dummy prefix, spaces stay
spaces (no ``▁``), and ``--remove_extra_whitespaces`` (default true)
decides about runs of spaces. ``--decompile`` prints the rules of the
compiled charsmap as a rule TSV instead (``Builder::SaveCharsMap``'s
format: ``SRC<TAB>TRG<TAB># src => trg``, code points in upper-case hex).
"""

from __future__ import annotations

import click

from subtok.cli.options import Command, bool_option, option
from subtok.errors import NormalizerError, SubtokError
from subtok.formats.sentencepiece import NormalizerSpec, load_model
from subtok.lines.streams import input_paths, open_output, read_blocks, write_blocks
from subtok.normalizers.sentencepiece import Normalizer

#: What SaveCharsMap blanks out of the comment column (it must stay one line).
_BLANKED = str.maketrans({"\b": " ", "\v": " ", "\f": " ", "\n": " ", "\r": " "})


@click.command("normalize", cls=Command)
@option("model", default="", help="Model file (.model): use its normalization rules.")
@option("normalization_rule_name", default="",
        help="Built-in rules: nmt_nfkc, nfkc, nmt_nfkc_cf, nfkc_cf or identity.")
@option("normalization_rule_tsv", default="", help="Rules from a TSV file (SRC<TAB>TRG).")
@bool_option("use_internal_normalization", False,
             "Normalize as for segmentation: the spec as it is (dummy prefix, ▁ for spaces).")
@bool_option("remove_extra_whitespaces", True, "Drop leading, trailing and repeated spaces.")
@bool_option("decompile", False, "Print the rules of the compiled charsmap as a TSV.")
@option("input", default="", help="Input file. Default: the files given, or stdin.")
@option("output", default=None, help="Output file. Default: stdout.")
@option("minloglevel", type=int, default=0, hidden=True)
@click.argument("files", nargs=-1, type=click.Path())
def normalize(model, normalization_rule_name, normalization_rule_tsv, use_internal_normalization,
              remove_extra_whitespaces, decompile, input, output, minloglevel, files):
    """Normalize text lines with a model's or a named rule set (like spm_normalize)."""
    spec = normalizer_spec(model, normalization_rule_tsv, normalization_rule_name,
                           use_internal_normalization, remove_extra_whitespaces)
    if decompile:
        with open_output(output) as out:
            out.write(decompiled_tsv(spec.precompiled_charsmap).encode("utf-8", "surrogateescape"))
        return
    paths = input_paths((input,) if input else (), () if input else files)
    normalizer = Normalizer.from_spec(spec)
    write_blocks((normalize_block(normalizer, block) for block in read_blocks(paths)), output)


def normalizer_spec(model: str = "", rule_tsv: str = "", rule_name: str = "",
                    use_internal: bool = False, remove_extra_whitespaces: bool = True
                    ) -> NormalizerSpec:
    """The spec spm_normalize runs: the source's, with its output flags
    unless ``use_internal``."""
    spec = _source_spec(model, rule_tsv, rule_name)
    if not use_internal:
        spec.add_dummy_prefix = False
        spec.escape_whitespaces = False
        spec.remove_extra_whitespaces = remove_extra_whitespaces
    return spec


def _source_spec(model: str, rule_tsv: str, rule_name: str) -> NormalizerSpec:
    """The NormalizerSpec of the first source given, in spm_normalize's order."""
    from subtok.normalizers import charsmap_builder
    if model:
        found = load_model(model).normalizer
        return NormalizerSpec(found.name, found.precompiled_charsmap, found.add_dummy_prefix,
                              found.remove_extra_whitespaces, found.escape_whitespaces)
    if rule_tsv:
        try:
            rules = charsmap_builder.load_rule_tsv(rule_tsv)
        except OSError as exc:
            raise SubtokError("%s: cannot read --normalization_rule_tsv: %s."
                              % (rule_tsv, exc.strerror or exc)) from None
        except ValueError as exc:
            raise SubtokError("--normalization_rule_tsv: %s." % str(exc).rstrip(".")) from None
        return NormalizerSpec("user_defined", charsmap_builder.compile_charsmap(rules))
    if rule_name:
        try:
            return NormalizerSpec(rule_name, charsmap_builder.builtin_charsmap(rule_name))
        except ValueError as exc:
            raise SubtokError("--normalization_rule_name=%s: %s." % (rule_name, exc)) from None
    raise click.UsageError("give --model, --normalization_rule_tsv or --normalization_rule_name.")


def normalize_block(normalizer: Normalizer, block: bytes) -> bytes:
    """Each line of ``block`` normalized, each followed by a newline."""
    normalize = normalizer.normalize
    lines = block.decode("utf-8", "surrogateescape").split("\n")
    return ("\n".join(map(normalize, lines)) + "\n").encode("utf-8", "surrogateescape")


def decompiled_tsv(blob: bytes) -> str:
    """The rules of a compiled charsmap as sentencepiece's
    ``Builder::SaveCharsMap`` writes them, sorted by source code points."""
    from subtok.normalizers.charsmap import decode_charsmap
    if not blob:
        raise NormalizerError("the rule set has no compiled charsmap to decompile "
                              "(identity rules).")
    lines = []
    for source, target in sorted(decode_charsmap(blob).items()):
        line = "%s\t%s\t# %s => %s" % (" ".join("%X" % ord(c) for c in source),
                                        " ".join("%X" % ord(c) for c in target), source, target)
        lines.append(line.translate(_BLANKED) + "\n")
    return "".join(lines)
