"""`kg train`: train kg's entity recognizer on gold annotations (the JSON Lines of `kg eval`)."""

from __future__ import annotations

import click

from kg.cli.common import progress_reporter


def _hold_outs(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> dict[str, int]:
    shares = {}
    for value in values:
        path, sep, percent = value.rpartition("=")
        if not sep or not path or not percent.isdigit() or not 0 < int(percent) < 100:
            raise click.BadParameter(f"{value!r}: expected FILE=PERCENT with a percent from 1 to 99", ctx=ctx, param=param)
        shares[path] = int(percent)
    return shares


@click.command()
@click.argument("gold", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--dev", multiple=True, type=click.Path(dir_okay=False), help="Gold file(s) for model selection and early stopping, never trained on.")
@click.option("--hold-out", "hold_out", multiple=True, metavar="FILE=PCT", callback=_hold_outs,
              help="Move PCT % of a GOLD file's documents (chosen by a hash of their ids) to dev. Without --dev or --hold-out, 20 % of every GOLD file is held out.")
@click.option("-o", "--out", "out_dir", required=True, type=click.Path(file_okay=False),
              help="Model folder to write: a new or empty folder, or one kg train wrote (its model is replaced when training ends); any other is refused.")
@click.option("--arch", type=click.Choice(["cnn", "transformer"]), default="cnn", show_default=True,
              help="cnn: spaCy's CNN tok2vec + NER. transformer: MiniLM fine-tuned as a token classifier, written as int8 ONNX (needs the train extra).")
@click.option("--max-steps", type=click.IntRange(min=1), default=None, help="Training steps at most  [default: cnn: the config's, 4000; transformer: all of --epochs].")
@click.option("--epochs", type=click.IntRange(min=1), default=None, help="transformer: passes over the training documents; the best on dev is kept  [default: 10].")
@click.option("--threads", type=click.IntRange(min=1), default=1, show_default=True, help="transformer: CPU threads torch trains on (part of what makes the same model).")
@click.option("--seed", type=int, default=0, show_default=True, help="Random seed: the same data, options and seed give the same model.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar and no summary.")
def train(
    gold: tuple[str, ...], dev: tuple[str, ...], hold_out: dict[str, int], out_dir: str, arch: str, max_steps: int | None, epochs: int | None,
    threads: int, seed: int, quiet: bool,
) -> None:
    """Train an entity recognizer on GOLD files and write it to OUT.

    GOLD files are JSON Lines as for `kg eval`: {"id", "text", "entities": [{"start",
    "end", "label"}]}, labels Method, Task, Metric, Material (→ DATASET),
    OtherScientificTerm (→ TERM) or kg's own type names. The folder holds the model, its
    model card (model-card.md) and scores on the dev documents; use it with
    `kg build/extract/eval --model OUT`. CPU only: the cnn takes minutes, the transformer
    about a minute and a half an epoch per 400 abstracts on two cores.
    """
    from kg.training.train import check_output, gather

    if arch == "transformer":
        from kg.training.transformer import require_train_extra

        require_train_extra()  # before anything is read: exit 24 names the extra
    elif epochs is not None:
        raise click.UsageError("--epochs is an option of --arch transformer")
    check_output(out_dir)  # before any gold file is read: an unusable -o fails at once
    data = gather(list(gold), dev=list(dev), hold_out=hold_out)
    with progress_reporter(enabled=not quiet) as progress:
        report = (lambda step, total, score: progress("Training", step, total)) if progress else None
        if arch == "transformer":
            from kg.training.transformer import TransformerOptions, train_transformer

            defaults = TransformerOptions()
            options = TransformerOptions(epochs=epochs or defaults.epochs, max_steps=max_steps, seed=seed, threads=threads)
            result = train_transformer(data, out_dir, options=options, progress=report)
        else:
            from kg.training.train import train as run_training

            result = run_training(data, out_dir, max_steps=max_steps, seed=seed, progress=report)
    if quiet:
        return
    strict, partial = result.dev_scores["strict"]["micro"], result.dev_scores["partial"]["micro"]
    click.echo(f"Trained {result.model_dir.rstrip('/')}/ in {result.seconds:.0f} s ({result.steps:,} steps, {result.size_bytes / 1e6:.1f} MB)")
    click.echo(f"  train documents  {len(data.train):>6,}")
    click.echo(f"  dev documents    {len(data.dev):>6,}")
    click.echo(f"  dev micro F1     strict {strict['f1']:.3f}  partial {partial['f1']:.3f}  (METHOD, TASK, METRIC, DATASET)")
    click.echo(f"  model card       {result.model_dir.rstrip('/')}/model-card.md")
