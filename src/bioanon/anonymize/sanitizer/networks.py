"""The decoupler's networks (imports torch; load it only through :mod:`.decoupler`).

- MLP encoder/decoder for feature vectors;
- a small convolutional pair for grey images up to 64×64 (padded to a multiple of 8);
- the aligner g_u(z_S) → y_S and the adversary h_v(z_NS) → y_S, trained on alternating
  terms: h_v minimises its cross-entropy, the encoder pushes h_v's output towards uniform.
"""

from __future__ import annotations

import math
import os

import torch
from torch import nn

from .dcorr import distance_correlation_torch


def set_threads() -> None:
    """One intra-op thread unless ``BIOANON_TORCH_THREADS`` says otherwise.

    The decoupler's networks are small: on a 2-core machine shared with other work, one
    thread ran a training step about 50 times faster than two (threads spin while waiting).
    """
    n = int(os.environ.get("BIOANON_TORCH_THREADS", "0")) or 1
    if torch.get_num_threads() != n:
        torch.set_num_threads(n)


def mlp(sizes: list[int], final_activation: bool = False) -> nn.Sequential:
    layers: list[nn.Module] = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:], strict=True)):
        layers.append(nn.Linear(a, b))
        if i < len(sizes) - 2 or final_activation:
            layers.append(nn.LeakyReLU(0.1))
    return nn.Sequential(*layers)


class ConvEncoder(nn.Module):
    """Three stride-2 convolutions and a linear head; input (n, h·w) grey pixels."""

    def __init__(self, shape: tuple[int, int], out: int, width: int = 32) -> None:
        super().__init__()
        self.shape = shape
        self.padded = tuple(8 * math.ceil(s / 8) for s in shape)
        self.body = nn.Sequential(
            nn.Conv2d(1, width, 4, 2, 1), nn.LeakyReLU(0.1),
            nn.Conv2d(width, 2 * width, 4, 2, 1), nn.LeakyReLU(0.1),
            nn.Conv2d(2 * width, 2 * width, 4, 2, 1), nn.LeakyReLU(0.1), nn.Flatten())
        flat = 2 * width * (self.padded[0] // 8) * (self.padded[1] // 8)
        self.head = nn.Linear(flat, out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h, w = self.shape
        img = x.view(-1, 1, h, w)
        img = nn.functional.pad(img, (0, self.padded[1] - w, 0, self.padded[0] - h))
        return self.head(self.body(img))


class ConvDecoder(nn.Module):
    """Mirror of :class:`ConvEncoder` with transposed convolutions; output (n, h·w)."""

    def __init__(self, shape: tuple[int, int], latent: int, width: int = 32) -> None:
        super().__init__()
        self.shape = shape
        self.padded = tuple(8 * math.ceil(s / 8) for s in shape)
        self.grid = (2 * width, self.padded[0] // 8, self.padded[1] // 8)
        self.head = nn.Sequential(nn.Linear(latent, math.prod(self.grid)), nn.LeakyReLU(0.1))
        self.body = nn.Sequential(
            nn.ConvTranspose2d(2 * width, 2 * width, 4, 2, 1), nn.LeakyReLU(0.1),
            nn.ConvTranspose2d(2 * width, width, 4, 2, 1), nn.LeakyReLU(0.1),
            nn.ConvTranspose2d(width, 1, 4, 2, 1))

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        h, w = self.shape
        img = self.body(self.head(z).view(-1, *self.grid))
        return img[:, 0, :h, :w].reshape(z.shape[0], h * w)


class DecouplerNet(nn.Module):
    """Encoder q_φ(z|x), decoder p_θ(x|z), aligner g_u and adversary h_v."""

    def __init__(self, n_features: int, n_classes: int, latent_dim: int, sensitive_dim: int,
                 hidden: int, architecture: str, image_shape: tuple[int, int] | None) -> None:
        super().__init__()
        self.k = sensitive_dim
        if architecture == "conv":
            assert image_shape is not None
            self.encoder: nn.Module = ConvEncoder(image_shape, 2 * latent_dim)
            self.decoder: nn.Module = ConvDecoder(image_shape, latent_dim)
        else:
            self.encoder = mlp([n_features, hidden, hidden // 2, 2 * latent_dim])
            self.decoder = mlp([latent_dim, hidden // 2, hidden, n_features])
        self.aligner = mlp([sensitive_dim, 64, n_classes])
        self.adversary = mlp([latent_dim - sensitive_dim, 128, 64, n_classes])

    def encode(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        mu, logvar = self.encoder(x).chunk(2, dim=1)
        return mu, logvar.clamp(-12.0, 8.0)

    def losses(self, x: torch.Tensor, y: torch.Tensor, beta: float
               ) -> dict[str, torch.Tensor]:
        """The four terms of equation (5) on one batch (means over the batch)."""
        mu, logvar = self.encode(x)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        z_s = z[:, :self.k]
        # Gaussian likelihood with each feature's variance set to its current batch error
        # (the "optimal sigma" VAE): with a fixed unit variance on standardized features the
        # reconstruction is worth too little against β·KL and the posterior collapses
        err = (self.decoder(z) - x).pow(2)
        var = err.mean(0).detach().clamp(min=1e-3)
        recon = 0.5 * ((err / var).sum(1).mean() + torch.log(var).sum())
        kl = -0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).sum(1).mean()
        ce = nn.functional.cross_entropy
        align_logits = self.aligner(z_s)
        # the released latents are the posterior means, so the adversary and the
        # decorrelation act on them (sampling noise would hide leakage from both)
        mu_s, mu_ns = mu[:, :self.k], mu[:, self.k:]
        # the adversary h_v learns y_S from z_NS (its input detached: the encoder does not
        # help it); the encoder is pushed to make h_v's prediction uniform (its weights
        # detached: h_v does not help the encoder)
        adv_logits = self.adversary(mu_ns.detach())
        frozen = {name: p.detach() for name, p in self.adversary.named_parameters()}
        fooled = torch.func.functional_call(self.adversary, frozen, (mu_ns,))
        return {
            "recon": recon, "kl": kl, "elbo": recon + beta * kl,
            "aligner": ce(align_logits, y), "dcorr": distance_correlation_torch(
                mu_s, mu_ns, squared=True),
            "adversary": ce(adv_logits, y),
            "confusion": -nn.functional.log_softmax(fooled, dim=1).mean(),
            "aligner_acc": (align_logits.argmax(1) == y).float().mean(),
            "adversary_acc": (adv_logits.argmax(1) == y).float().mean(),
        }
