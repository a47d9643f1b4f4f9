#include <cflrun/data/client_data.hpp>

#include <utility>

namespace cflrun::data {

ClientData partitioned_client_data(std::shared_ptr<const ImageDataset> dataset,
                                   Partition partition) {
  ClientData data;
  data.sample_shape = dataset->train.images.sizes().slice(1).vec();
  data.num_classes = dataset->num_classes;
  data.true_clusters = partition.true_clusters();
  const bool movable = !partition.pools.empty();
  auto kept = std::make_shared<const Partition>(std::move(partition));
  data.samples = [dataset, kept](int client, bool train) {
    return client_samples(*dataset, kept->clients.at(static_cast<std::size_t>(client)), train);
  };
  if (movable) {
    data.samples_in = [dataset, kept](int client, int cluster, bool train) {
      return client_samples(*dataset, moved_shard(*kept, client, cluster), train);
    };
  }
  return data;
}

}  // namespace cflrun::data
