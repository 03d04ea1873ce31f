"""The Lightning script of lightning_train.py as resumecheck targets.

    resumecheck run examples/frameworks/lightning_check.py:DEFAULT
    resumecheck run examples/frameworks/lightning_check.py:RECOMMENDED
"""

from resumecheck.frameworks import lightning_target

import lightning_train as train  # the user's script, beside this file

# 5 batches per epoch: resuming after step 7 lands mid-way through the second epoch.
DEFAULT = lightning_target(module=train.TinyClassifier, data=train.loader,
                           steps=12, resume_at=(7,))
RNG_CALLBACK = lightning_target(module=train.TinyClassifier, data=train.loader, steps=12,
                                resume_at=(7,), trainer={"callbacks": [train.RandomStateCheckpoint()]})
NO_DROPOUT = lightning_target(module=lambda: train.TinyClassifier(dropout=0.0),
                              data=train.loader, steps=12, resume_at=(7,))
# the closest plain Lightning comes (the README's "recommended" row): the data resumes
# step for step, and dropout still departs, the streams a draw on (the report says `rng`)
RECOMMENDED = lightning_target(module=train.TinyClassifier, data=train.stateful_loader,
                               steps=12, resume_at=(7,),
                               trainer={"callbacks": [train.RandomStateCheckpoint()]})
# a checkpoint at the last batch of an epoch (step 5), data and dropout out of the picture
EPOCH_END = lightning_target(module=lambda: train.TinyClassifier(dropout=0.0),
                             data=train.stateful_loader, steps=12, resume_at=(5,))
