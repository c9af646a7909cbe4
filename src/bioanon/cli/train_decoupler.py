"""``bioanon train-decoupler``: train the sanitizer's global decoupler on auxiliary data."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from ..errors import BioanonError
from ..io import check_output_file
from ..table import FORMATS
from .common import (
    OUT_FLAGS,
    LabelOpt,
    SeedOpt,
    app,
    console,
    input_argument,
    progress_bar,
    read_input,
    refuse_unused,
    user_errors,
)
from .options import parse_hxw


@app.command("train-decoupler")
@user_errors
def train_decoupler_cmd(
    aux: Annotated[Path, input_argument("Auxiliary feature table (.parquet, .csv, .npz): "
                                             "public data from the owner's distribution, "
                                             "never the data to release.")],
    output: Annotated[Path, typer.Option(*OUT_FLAGS, help="Decoupler file to write.")],
    sensitive: Annotated[str, typer.Option("--sensitive",
                                           help="Column of the sensitive attribute.")],
    label: LabelOpt = None,
    latent_dim: Annotated[int, typer.Option(help="Latent size m.")] = 32,
    sensitive_dim: Annotated[int, typer.Option(help="Sensitive latent size k.")] = 8,
    beta: Annotated[float, typer.Option(help="β of the β-VAE bound.")] = 5.0,
    alpha_vae: Annotated[float, typer.Option(help="Weight α1 of the VAE bound.")] = 1.0,
    alpha_aligner: Annotated[float, typer.Option(help="Weight α2 of the aligner.")] = 10.0,
    alpha_dcorr: Annotated[float, typer.Option(help="Weight α3 of dcorr(z_S, z_NS).")] = 100.0,
    alpha_adversary: Annotated[float, typer.Option(help="Weight α4 of the adversary.")] = 10.0,
    epochs: Annotated[int, typer.Option(help="Training epochs.")] = 60,
    batch_size: Annotated[int, typer.Option(help="Batch size.")] = 256,
    lr: Annotated[float, typer.Option(help="Adam learning rate.")] = 2e-3,
    hidden: Annotated[int, typer.Option(help="Hidden width of the MLP pair.")] = 256,
    architecture: Annotated[str, typer.Option(help="mlp (feature vectors) or conv (grey "
                                                   "images up to 64x64).")] = "mlp",
    image_shape: Annotated[str | None, typer.Option(
        help="Image HEIGHTxWIDTH for --architecture conv (default: square).")] = None,
    seed: SeedOpt = None,
) -> None:
    """Train the sanitizer's global decoupler (β-VAE + aligner + dcorr + adversary)."""
    from ..anonymize.sanitizer import train_decoupler

    refuse_unused({"image_shape": (architecture == "conv", "it shapes the images of "
                                                          "--architecture conv")})
    check_output_file(output, [aux])  # the input itself named first: the graver mistake
    if output.suffix.lower() in FORMATS:  # a table's name: the decoupler is no table
        raise BioanonError(f"-o '{output}' names a table ({output.suffix}), but train-decoupler "
                           "writes a PyTorch file of the decoupler's weights (read back with "
                           "--decoupler); name it .pt, e.g. decoupler.pt")
    table = read_input(aux, [sensitive, *(label or [])])
    y = table.label(sensitive)
    config = {"latent_dim": latent_dim, "sensitive_dim": sensitive_dim, "beta": beta,
              "alpha_vae": alpha_vae, "alpha_aligner": alpha_aligner,
              "alpha_dcorr": alpha_dcorr, "alpha_adversary": alpha_adversary,
              "epochs": epochs, "batch_size": batch_size, "lr": lr, "hidden": hidden,
              "architecture": architecture,
              "image_shape": parse_hxw(image_shape, "--image-shape")}
    with progress_bar("training the decoupler") as update:
        dec = train_decoupler(table.X, y, sensitive, table.feature_names, config, seed, update)
    dec.save(output)
    final = dec.info["final"]
    tab = Table(title="decoupler (auxiliary data)", show_header=True)
    tab.add_column("measure")
    tab.add_column("value", justify="right")
    for key, value in [
        ("records × features", f"{table.n_records} × {table.n_features}"),
        (f"'{sensitive}' classes", str(len(dec.info["classes"]))),
        ("training time", f"{dec.info['train_seconds']:.1f} s"),
        ("aligner accuracy on z_S (last epoch)", f"{final.get('aligner_acc', 0):.3f}"),
        ("adversary accuracy on z_NS (last epoch)", f"{final.get('adversary_acc', 0):.3f}"),
        ("dcorr²(z_S, z_NS) (last epoch)", f"{final.get('dcorr', 0):.4f}"),
    ]:
        tab.add_row(key, value)
    console.print(tab)
    console.print(f"wrote {output}")
